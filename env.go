package xray

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/goxray/xray/internal/engine"
	"github.com/goxray/xray/internal/settings"
	"github.com/goxray/xray/internal/xrayflags"
)

// The environment variables compiler-rt users know configure goxray too,
// so that a service can be traced without a code change:
//
//	XRAY_OPTIONS="patch_premain=true xray_mode=xray-fdr xray_logfile_base=/var/tmp/"
//	XRAY_FDR_OPTIONS="buffer_size=65536 buffer_max=256 func_duration_threshold_us=5"
//
// They are read once, when the package is initialised. Tracing started
// this way says so in one line on standard error, with where files go
// and the command that flushes one. Malformed or unknown
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
//	xray_logfile_base            Options.Dir (its directory) and FilePrefix: compiler-rt's
//	                             file name prefix ("/var/tmp/" a directory, "/var/tmp/svc-"
//	                             a directory and a prefix), except that a base without a
//	                             trailing '/' naming an existing directory is that directory
//	                             (a line on stderr says so)
//	func_duration_threshold_us   Options.MinDuration (compiler-rt's default is 5 µs; ours 0)
//	buffer_size, buffer_max      Options.BufferSize, BufferCount
//	no_file_flush                Options.NoFinalFile
//	flush_on_exit                Options.FlushOnExit (goxray's: a final file on SIGTERM/SIGINT)
//	fast_clock                   Options.FastClock (goxray's: RDTSC without a fence)
//	go_trace                     Options.GoTrace (goxray's: Go's execution trace beside every file)
//	overhead_budget              Options.OverheadBudget (goxray's: percent of the process's CPU time, or off)
//	fdr_version, mode            Options.Version, Mode (ours: 1|5, flight-recorder|fill)
//	dir_max_files, dir_max_bytes Options.DirMaxFiles, DirMaxBytes (goxray's: the bound on the
//	                             program's files in Dir; a count or bytes ≥ 1, or none)
//	flush_signal                 Options.FlushSignal (ours: a signal name such as WINCH, a number, or none)
//	verbosity                    ≥ 1 logs the configuration at Start
//	grace_period_ms and the other compiler-rt flags: accepted and ignored
//	(a flush copies what each writer has published; it waits for nobody)
//
// See internal/xrayflags for the syntax; internal/settings holds each
// flag's row: its Options field, default and validation.
var env, envWarnings = xrayflags.FromEnv()

// envNotes prints the environment's warnings, and says when
// xray_logfile_base names a directory, on standard error.
func envNotes() {
	for _, w := range envWarnings {
		fmt.Fprintln(os.Stderr, w)
	}
	dir, _, isDir := logfileBase(env)
	if isDir {
		fmt.Fprintf(os.Stderr, "xray: xray_logfile_base=%q is a directory: files go in it, as with %q (compiler-rt would read it as a file name prefix and write %s<program>.XXXXXX in %s)\n",
			env.LogfileBase, env.LogfileBase+"/", env.LogfileBase, filepath.Dir(dir))
	}
}

// startedLine is the one line that says tracing started from the
// environment: where files go and how to ask for one.
func startedLine(c engine.Config, pid int) string {
	how := "no flush signal (flush_signal=none): xray.Flush or xrayhttp write files"
	if sig, ok := c.FlushSignal.(syscall.Signal); ok {
		name := strings.TrimPrefix(unix.SignalName(sig), "SIG")
		if name == "" {
			name = strconv.Itoa(int(sig))
		}
		how = fmt.Sprintf("flush with kill -%s %d", name, pid)
	}
	if c.FlushOnExit {
		how += "; a final file on SIGTERM or SIGINT"
	}
	return fmt.Sprintf("xray: tracing since program start (XRAY_OPTIONS): files go to %s with a .map beside each; %s",
		filepath.Join(c.Dir, c.FilePrefix+c.Program+".XXXXXX"), how)
}

// logfileBase resolves xray_logfile_base into a directory and a file name
// prefix. compiler-rt's meaning is a prefix that may hold a directory
// ("/var/tmp/", "/var/tmp/svc-", "svc-"), and so it is here, with one
// exception: a base without a trailing '/' that names an existing
// directory is that directory. compiler-rt would write /var/tmpsvc.XXXXXX
// in /var for xray_logfile_base=/var/tmp, which nobody means; isDir
// reports the exception, which init says on stderr.
func logfileBase(c xrayflags.Config) (dir, prefix string, isDir bool) {
	if !c.Has(xrayflags.FieldLogfileBase) {
		return "", "", false
	}
	if b := c.LogfileBase; b != "" && !strings.HasSuffix(b, "/") {
		if fi, err := os.Stat(b); err == nil && fi.IsDir() {
			return filepath.Clean(b), "", true
		}
	}
	return c.LogfileDir(), c.LogfilePrefix(), false
}

// envDefaults fills v's zero fields with what the environment sets
// (xray_logfile_base through logfileBase, the other settings by their
// rows of the schema) and returns the settings it took.
func envDefaults(v *settings.Values) settings.Set {
	ev, set := env.Settings, env.Sets
	if env.Has(xrayflags.FieldLogfileBase) {
		// "dir/" names files <program>.XXXXXX: an empty prefix, set.
		ev.Dir, ev.FilePrefix, _ = logfileBase(env)
		set = set.With(settings.Dir).With(settings.FilePrefix)
	}
	return v.FillFrom(&ev, set)
}
