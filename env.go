package xray

import (
	"fmt"
	"os"
	"syscall"

	"github.com/goxray/xray/internal/xrayflags"
)

// The environment variables compiler-rt users know configure goxray too,
// so that a service can be traced without a code change:
//
//	XRAY_OPTIONS="patch_premain=true xray_mode=xray-fdr xray_logfile_base=/var/tmp/"
//	XRAY_FDR_OPTIONS="buffer_size=65536 buffer_max=256 func_duration_threshold_us=5"
//
// They are read once, when the package is initialised. Malformed or unknown
// flags print one line each on standard error and are otherwise ignored;
// the rest applies. patch_premain=true with xray_mode=xray-fdr starts
// tracing before main, with the environment's settings over the defaults.
// A later Start with Options composes with that session instead of
// failing (see Start), so a program written for the Quick start can also
// be traced from the environment.
//
// Precedence, lowest first: built-in defaults, the environment, then the
// non-zero fields of the Options given to Start (Options.IgnoreEnv skips
// the environment). Flags and their mapping:
//
//	xray_logfile_base            Options.Dir (its directory) and FilePrefix
//	func_duration_threshold_us   Options.MinDuration (compiler-rt's default is 5 µs; ours 0)
//	buffer_size, buffer_max      Options.BufferSize, BufferCount
//	no_file_flush                Options.NoFinalFile
//	flush_on_exit                Options.FlushOnExit (goxray's: a final file on SIGTERM/SIGINT)
//	fast_clock                   Options.FastClock (goxray's: RDTSC without a fence)
//	go_trace                     Options.GoTrace (goxray's: Go's execution trace beside every file)
//	overhead_budget              Options.OverheadBudget (goxray's: percent of the process's CPU time, or off)
//	fdr_version, mode            Options.Version, Mode (ours: 1|5, flight-recorder|fill)
//	flush_signal                 Options.FlushSignal (ours: USR1, USR2, HUP, none, or a number)
//	verbosity                    ≥ 1 logs the configuration at Start
//	grace_period_ms and the other compiler-rt flags: accepted and ignored
//	(a flush copies what each writer has published; it waits for nobody)
//
// See internal/xrayflags for the syntax.
var env, envWarnings = xrayflags.FromEnv()

func init() {
	for _, w := range envWarnings {
		fmt.Fprintln(os.Stderr, w)
	}
	if env.Start {
		if err := Start(Options{}); err != nil {
			fmt.Fprintf(os.Stderr, "xray: XRAY_OPTIONS asked to start tracing: %v\n", err)
		} else {
			envSession.Store(new(Stats().Started))
		}
		if env.Verbosity > 0 && Stats().Running {
			x, f := env.Flags()
			fmt.Fprintf(os.Stderr, "xray: started by XRAY_OPTIONS=%q XRAY_FDR_OPTIONS=%q\n", x, f)
		}
	}
}

// envDefaults fills o's zero fields from the environment.
func envDefaults(o Options) Options {
	if env.Has(xrayflags.FieldLogfileBase) {
		if o.Dir == "" {
			o.Dir = env.LogfileDir()
		}
		if o.FilePrefix == "" {
			// "dir/" names files <program>.XXXXXX: an empty prefix.
			o.FilePrefix, o.prefixSet = env.LogfilePrefix(), true
		}
	}
	if o.MinDuration == 0 && env.Has(xrayflags.FieldMinDuration) {
		o.MinDuration = env.MinDuration
	}
	if o.BufferSize == 0 && env.Has(xrayflags.FieldBufferSize) {
		o.BufferSize = env.BufferSize
	}
	if o.BufferCount == 0 && env.Has(xrayflags.FieldBufferMax) {
		o.BufferCount = env.BufferMax
	}
	if !o.FlushOnExit && env.Has(xrayflags.FieldFlushOnExit) {
		o.FlushOnExit = env.FlushOnExit
	}
	if !o.FastClock && env.Has(xrayflags.FieldFastClock) {
		o.FastClock = env.FastClock
	}
	if !o.GoTrace && env.Has(xrayflags.FieldGoTrace) {
		o.GoTrace = env.GoTrace
	}
	if o.OverheadBudget == 0 && env.Has(xrayflags.FieldOverheadBudget) {
		o.OverheadBudget = env.OverheadBudget
	}
	if !o.NoFinalFile && env.Has(xrayflags.FieldNoFileFlush) {
		o.NoFinalFile = env.NoFileFlush
	}
	if o.Version == 0 && env.Has(xrayflags.FieldVersion) {
		o.Version = env.Version
	}
	if o.Mode == FlightRecorder && env.Has(xrayflags.FieldMode) && env.Mode == xrayflags.ModeFill {
		o.Mode = Fill
	}
	if o.FlushSignal == nil && env.Has(xrayflags.FieldFlushSignal) {
		if env.FlushSignal == 0 {
			o.FlushSignal = NoSignal
		} else {
			o.FlushSignal = syscall.Signal(env.FlushSignal)
		}
	}
	return o
}
