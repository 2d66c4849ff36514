package xrayflags

import (
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goxray/xray/internal/buffer"
	"github.com/goxray/xray/internal/settings"
)

// cfg builds an expected Config with its set bits.
func cfg(c Config, set Field) Config {
	c.set = set
	return c
}

// fdr builds an expected Config that sets the settings ids to v's values.
func fdr(v settings.Values, ids ...settings.ID) Config { return with(Config{}, v, ids...) }

// with is c with the settings ids set to v's values.
func with(c Config, v settings.Values, ids ...settings.ID) Config {
	c.Settings = v
	for _, id := range ids {
		c.Sets = c.Sets.With(id)
	}
	return c
}

const (
	wantSize = "a decimal integer ≥ 0"
	wantBool = settings.WantBool
)

type parseCase struct {
	name      string
	xray, fdr string
	want      Config
	warns     []string // exact lines, in order
}

func runCases(t *testing.T, cases []parseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, warns := Parse(tc.xray, tc.fdr)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse(%q, %q)\n got %+v\nwant %+v", tc.xray, tc.fdr, got, tc.want)
			}
			var lines []string
			for _, w := range warns {
				lines = append(lines, w.String())
			}
			if !reflect.DeepEqual(lines, tc.warns) {
				t.Errorf("Parse(%q, %q) warnings\n got %q\nwant %q", tc.xray, tc.fdr, lines, tc.warns)
			}
		})
	}
}

const fdrStart = FieldPatchPremain | FieldXRayMode

var startFDR = cfg(Config{Start: true, PatchPremain: true, XRayMode: XRayModeFDR}, fdrStart)

func TestSeparators(t *testing.T) {
	var cases []parseCase
	for _, sep := range []string{" ", ":", ",", "\t", "\n", "\r", " ,:\t\n\r ", ",,", "::"} {
		cases = append(cases, parseCase{
			name: fmt.Sprintf("%q", sep),
			xray: sep + "patch_premain=true" + sep + "xray_mode=xray-fdr" + sep,
			want: startFDR,
		})
	}
	cases = append(cases,
		parseCase{name: "compiler-rt test string", fdr: "buffer_size=16384:buffer_max=10",
			want: fdr(settings.Values{BufferSize: 16384, BufferCount: 10}, settings.BufferSize, settings.BufferCount)},
		parseCase{name: "empty"},
		parseCase{name: "only separators", xray: " ,:\t", fdr: "\n\r,"},
	)
	runCases(t, cases)
}

func TestQuoting(t *testing.T) {
	base := func(v string) Config { return cfg(Config{LogfileBase: v}, FieldLogfileBase) }
	runCases(t, []parseCase{
		{name: "double quotes hold separators", xray: `xray_logfile_base="/tmp/my traces,x:y/t-"`, want: base("/tmp/my traces,x:y/t-")},
		{name: "single quotes hold separators", xray: `xray_logfile_base='a b'`, want: base("a b")},
		{name: "other quote inside", xray: `xray_logfile_base='say "hi"'`, want: base(`say "hi"`)},
		{name: "empty quoted", xray: `xray_logfile_base=""`, want: base("")},
		{name: "empty bare", xray: `xray_logfile_base= verbosity=1`,
			want: cfg(Config{Verbosity: 1}, FieldLogfileBase|FieldVerbosity)},
		{name: "next flag right after the closing quote", xray: `xray_logfile_base="a b"verbosity=2`,
			want: cfg(Config{LogfileBase: "a b", Verbosity: 2}, FieldLogfileBase|FieldVerbosity)},
		{name: "quote inside a bare value is literal", xray: `xray_logfile_base=a"b`, want: base(`a"b`)},
		{name: "equals inside a value", xray: `xray_logfile_base=a=b`, want: base("a=b")},
		{name: "quoted number", fdr: `buffer_size='4096'`, want: fdr(settings.Values{BufferSize: 4096}, settings.BufferSize)},
		{name: "quoted value keeps its spaces and is then malformed", fdr: `buffer_size=" 4096"`,
			warns: []string{`xray: XRAY_FDR_OPTIONS: buffer_size=" 4096": want a decimal integer ≥ 0 (ignored)`}},
		{name: "unterminated double quote swallows the rest", xray: `xray_logfile_base="abc verbosity=1`,
			warns: []string{`xray: XRAY_OPTIONS: "xray_logfile_base": unterminated " quote (ignored, with the rest of the string)`}},
		{name: "unterminated single quote, earlier flags stay", fdr: `buffer_max=3 buffer_size='4096`,
			want:  fdr(settings.Values{BufferCount: 3}, settings.BufferCount),
			warns: []string{`xray: XRAY_FDR_OPTIONS: "buffer_size": unterminated ' quote (ignored, with the rest of the string)`}},
	})
}

func TestXRayOptions(t *testing.T) {
	runCases(t, []parseCase{
		{name: "patch_premain and mode", xray: "patch_premain=true xray_mode=xray-fdr", want: startFDR},
		{name: "patch_premain false", xray: "patch_premain=false xray_mode=xray-fdr",
			want: cfg(Config{XRayMode: XRayModeFDR}, fdrStart)},
		{name: "mode only selects", xray: "xray_mode=xray-fdr", want: cfg(Config{XRayMode: XRayModeFDR}, FieldXRayMode)},
		{name: "patch_premain without mode", xray: "patch_premain=1",
			want:  cfg(Config{PatchPremain: true}, FieldPatchPremain),
			warns: []string{"xray: XRAY_OPTIONS: patch_premain=true without xray_mode=xray-fdr: tracing is not started"}},
		{name: "basic mode", xray: "patch_premain=true xray_mode=xray-basic",
			want: cfg(Config{PatchPremain: true, XRayMode: "xray-basic"}, fdrStart),
			warns: []string{
				`xray: XRAY_OPTIONS: xray_mode="xray-basic": not supported, goxray writes only xray-fdr traces (ignored)`,
				"xray: XRAY_OPTIONS: patch_premain=true without xray_mode=xray-fdr: tracing is not started",
			}},
		{name: "profiling mode", xray: "xray_mode=xray-profiling",
			want:  cfg(Config{XRayMode: "xray-profiling"}, FieldXRayMode),
			warns: []string{`xray: XRAY_OPTIONS: xray_mode="xray-profiling": not supported, goxray writes only xray-fdr traces (ignored)`}},
		{name: "unknown mode", xray: "xray_mode=fdr",
			want:  cfg(Config{XRayMode: "fdr"}, FieldXRayMode),
			warns: []string{`xray: XRAY_OPTIONS: xray_mode="fdr": unknown mode, want xray-fdr (ignored)`}},
		{name: "last mode wins, no stale warning", xray: "xray_mode=xray-basic patch_premain=true xray_mode=xray-fdr", want: startFDR},
		{name: "logfile base with directory", xray: "xray_logfile_base=traces/", want: cfg(Config{LogfileBase: "traces/"}, FieldLogfileBase)},
		{name: "verbosity", xray: "verbosity=2", want: cfg(Config{Verbosity: 2}, FieldVerbosity)},
		{name: "verbosity signed", xray: "verbosity=-1 verbosity=+3", want: cfg(Config{Verbosity: 3}, FieldVerbosity)},
		{name: "verbosity zero is set", xray: "verbosity=0", want: cfg(Config{}, FieldVerbosity)},
		{name: "verbosity malformed", xray: "verbosity=high",
			warns: []string{`xray: XRAY_OPTIONS: verbosity="high": want a decimal integer (ignored)`}},
		{name: "verbosity empty", xray: "verbosity=",
			warns: []string{`xray: XRAY_OPTIONS: verbosity="": want a decimal integer (ignored)`}},
		{name: "verbosity out of range", xray: "verbosity=99999999999",
			warns: []string{`xray: XRAY_OPTIONS: verbosity="99999999999": want a decimal integer (ignored)`}},
		{name: "page size override ignored", xray: "xray_page_size_override=4096"},
		{name: "page size override still checked", xray: "xray_page_size_override=4k",
			warns: []string{`xray: XRAY_OPTIONS: xray_page_size_override="4k": want a decimal integer (ignored)`}},
	})
}

func TestDeprecatedFlags(t *testing.T) {
	runCases(t, []parseCase{
		{name: "xray_fdr_log selects fdr", xray: "patch_premain=true xray_fdr_log=true", want: startFDR},
		{name: "xray_fdr_log alone", xray: "xray_fdr_log=yes", want: cfg(Config{XRayMode: XRayModeFDR}, FieldXRayMode)},
		{name: "xray_fdr_log false", xray: "xray_fdr_log=false"},
		{name: "explicit empty mode still lets xray_fdr_log select", xray: "xray_mode= xray_fdr_log=1",
			want: cfg(Config{XRayMode: XRayModeFDR}, FieldXRayMode)},
		{name: "xray_mode beats xray_fdr_log", xray: "xray_fdr_log=true xray_mode=xray-basic",
			want:  cfg(Config{XRayMode: "xray-basic"}, FieldXRayMode),
			warns: []string{`xray: XRAY_OPTIONS: xray_mode="xray-basic": not supported, goxray writes only xray-fdr traces (ignored)`}},
		{name: "xray_fdr_log malformed", xray: "xray_fdr_log=on",
			warns: []string{`xray: XRAY_OPTIONS: xray_fdr_log="on": want a boolean (true, false, 1, 0, yes, no) (ignored)`}},
		{name: "deprecated threshold with empty fdr options", xray: "xray_fdr_log_func_duration_threshold_us=7",
			want: fdr(settings.Values{MinDuration: 7 * time.Microsecond}, settings.MinDuration)},
		{name: "deprecated threshold with separator-only fdr options", xray: "xray_fdr_log_func_duration_threshold_us=7", fdr: " , ",
			want: fdr(settings.Values{MinDuration: 7 * time.Microsecond}, settings.MinDuration)},
		{name: "deprecated threshold loses to fdr options", xray: "xray_fdr_log_func_duration_threshold_us=7", fdr: "buffer_max=9",
			want:  fdr(settings.Values{BufferCount: 9}, settings.BufferCount),
			warns: []string{"xray: XRAY_OPTIONS: xray_fdr_log_func_duration_threshold_us is deprecated and ignored because XRAY_FDR_OPTIONS is set (use func_duration_threshold_us there)"}},
		{name: "deprecated threshold vs new one", xray: "xray_fdr_log_func_duration_threshold_us=7", fdr: "func_duration_threshold_us=3",
			want:  fdr(settings.Values{MinDuration: 3 * time.Microsecond}, settings.MinDuration),
			warns: []string{"xray: XRAY_OPTIONS: xray_fdr_log_func_duration_threshold_us is deprecated and ignored because XRAY_FDR_OPTIONS is set (use func_duration_threshold_us there)"}},
		{name: "deprecated threshold malformed", xray: "xray_fdr_log_func_duration_threshold_us=x",
			warns: []string{`xray: XRAY_OPTIONS: xray_fdr_log_func_duration_threshold_us="x": want a number of microseconds ≥ 0 (ignored)`}},
		{name: "grace periods ignored", xray: "xray_fdr_log_grace_period_ms=100 xray_fdr_log_grace_period_us=5"},
		{name: "naive log", xray: "xray_naive_log=true",
			warns: []string{"xray: XRAY_OPTIONS: xray_naive_log=true: basic mode is not supported, goxray writes only xray-fdr traces (ignored)"}},
		{name: "naive log off and its flags", xray: "xray_naive_log=false xray_naive_log_func_duration_threshold_us=5 xray_naive_log_max_stack_depth=64 xray_naive_log_thread_buffer_size=1024"},
	})
}

func TestFDROptions(t *testing.T) {
	us := func(n int) Config {
		return fdr(settings.Values{MinDuration: time.Duration(n) * time.Microsecond}, settings.MinDuration)
	}
	warn := func(flag, value, want string) []string {
		return []string{fmt.Sprintf("xray: XRAY_FDR_OPTIONS: %s=%q: want %s (ignored)", flag, value, want)}
	}
	sig := func(s syscall.Signal) Config {
		if s == 0 {
			return fdr(settings.Values{FlushSignal: settings.NoSignal}, settings.FlushSignal)
		}
		return fdr(settings.Values{FlushSignal: s}, settings.FlushSignal)
	}
	refused := func(value string, s syscall.Signal) []string {
		why := settings.SignalProblem(s)
		if why == "" {
			t.Fatalf("signal %d is not refused", s)
		}
		return warn("flush_signal", value, settings.WantSignal+"; "+settings.SignalFlag(s)+": "+why)
	}
	const wantUS = "a number of microseconds ≥ 0"
	const wantBound = "a decimal integer ≥ 1, or none"
	runCases(t, []parseCase{
		{name: "threshold", fdr: "func_duration_threshold_us=5", want: us(5)},
		{name: "threshold zero is set", fdr: "func_duration_threshold_us=0", want: us(0)},
		{name: "threshold negative", fdr: "func_duration_threshold_us=-1", warns: warn("func_duration_threshold_us", "-1", wantUS)},
		{name: "threshold float", fdr: "func_duration_threshold_us=1e3", warns: warn("func_duration_threshold_us", "1e3", wantUS)},
		{name: "threshold with unit", fdr: "func_duration_threshold_us=5us", warns: warn("func_duration_threshold_us", "5us", wantUS)},
		{name: "threshold overflows a Duration", fdr: "func_duration_threshold_us=9223372036854776",
			warns: warn("func_duration_threshold_us", "9223372036854776", wantUS)},
		{name: "threshold largest", fdr: "func_duration_threshold_us=9223372036854775", want: us(9223372036854775)},
		{name: "grace period ignored", fdr: "grace_period_ms=100"},
		{name: "grace period checked", fdr: "grace_period_ms=1s", warns: warn("grace_period_ms", "1s", "a decimal integer")},
		{name: "buffer size", fdr: "buffer_size=65536", want: fdr(settings.Values{BufferSize: 65536}, settings.BufferSize)},
		{name: "buffer size malformed", fdr: "buffer_size=abc", warns: warn("buffer_size", "abc", wantSize)},
		{name: "buffer size hex", fdr: "buffer_size=0x1000", warns: warn("buffer_size", "0x1000", wantSize)},
		{name: "buffer size negative", fdr: "buffer_size=-4096", warns: warn("buffer_size", "-4096", wantSize)},
		{name: "buffer size malformed keeps earlier", fdr: "buffer_size=100 buffer_size=abc",
			want: fdr(settings.Values{BufferSize: 100}, settings.BufferSize), warns: warn("buffer_size", "abc", wantSize)},
		{name: "repeated flag last wins", fdr: "buffer_size=1 buffer_max=2 buffer_size=3 buffer_max=4",
			want: fdr(settings.Values{BufferSize: 3, BufferCount: 4}, settings.BufferSize, settings.BufferCount)},
		{name: "buffer max", fdr: "buffer_max=100", want: fdr(settings.Values{BufferCount: 100}, settings.BufferCount)},
		{name: "buffer max empty", fdr: "buffer_max=", warns: warn("buffer_max", "", wantSize)},
		{name: "no_file_flush true", fdr: "no_file_flush=true", want: fdr(settings.Values{NoFinalFile: true}, settings.NoFinalFile)},
		{name: "no_file_flush 1", fdr: "no_file_flush=1", want: fdr(settings.Values{NoFinalFile: true}, settings.NoFinalFile)},
		{name: "no_file_flush YES", fdr: "no_file_flush=YES", want: fdr(settings.Values{NoFinalFile: true}, settings.NoFinalFile)},
		{name: "no_file_flush False", fdr: "no_file_flush=False", want: fdr(settings.Values{}, settings.NoFinalFile)},
		{name: "no_file_flush no", fdr: "no_file_flush=no", want: fdr(settings.Values{}, settings.NoFinalFile)},
		{name: "no_file_flush 2", fdr: "no_file_flush=2", warns: warn("no_file_flush", "2", wantBool)},
		{name: "flush_on_exit true", fdr: "flush_on_exit=true", want: fdr(settings.Values{FlushOnExit: true}, settings.FlushOnExit)},
		{name: "flush_on_exit 0", fdr: "flush_on_exit=0", want: fdr(settings.Values{}, settings.FlushOnExit)},
		{name: "flush_on_exit maybe", fdr: "flush_on_exit=maybe", warns: warn("flush_on_exit", "maybe", wantBool)},
		{name: "fast_clock", fdr: "fast_clock=true", want: fdr(settings.Values{FastClock: true}, settings.FastClock)},
		{name: "go_trace", fdr: "go_trace=true", want: fdr(settings.Values{GoTrace: true}, settings.GoTrace)},
		{name: "overhead_budget 5", fdr: "overhead_budget=5", want: fdr(settings.Values{OverheadBudget: 5}, settings.OverheadBudget)},
		{name: "overhead_budget 0.5", fdr: "overhead_budget=0.5", want: fdr(settings.Values{OverheadBudget: 0.5}, settings.OverheadBudget)},
		{name: "overhead_budget off", fdr: "overhead_budget=off", want: fdr(settings.Values{OverheadBudget: -1}, settings.OverheadBudget)},
		{name: "overhead_budget 0", fdr: "overhead_budget=0", warns: warn("overhead_budget", "0", "a percentage of the CPU above 0 and at most 100, or off")},
		{name: "overhead_budget -3", fdr: "overhead_budget=-3", warns: warn("overhead_budget", "-3", "a percentage of the CPU above 0 and at most 100, or off")},
		{name: "overhead_budget 200", fdr: "overhead_budget=200", warns: warn("overhead_budget", "200", "a percentage of the CPU above 0 and at most 100, or off")},
		{name: "dir_max_files", fdr: "dir_max_files=10", want: fdr(settings.Values{DirMaxFiles: 10}, settings.DirMaxFiles)},
		{name: "dir_max_files none", fdr: "dir_max_files=none", want: fdr(settings.Values{DirMaxFiles: -1}, settings.DirMaxFiles)},
		{name: "dir_max_files 0", fdr: "dir_max_files=0", warns: warn("dir_max_files", "0", wantBound)},
		{name: "dir_max_files -2", fdr: "dir_max_files=-2", warns: warn("dir_max_files", "-2", wantBound)},
		{name: "dir_max_bytes", fdr: "dir_max_bytes=1073741824", want: fdr(settings.Values{DirMaxBytes: 1 << 30}, settings.DirMaxBytes)},
		{name: "dir_max_bytes NONE", fdr: "dir_max_bytes=NONE", want: fdr(settings.Values{DirMaxBytes: -1}, settings.DirMaxBytes)},
		{name: "dir_max_bytes 1G", fdr: "dir_max_bytes=1G", warns: warn("dir_max_bytes", "1G", wantBound)},
		{name: "version 1", fdr: "fdr_version=1", want: fdr(settings.Values{Version: 1}, settings.Version)},
		{name: "version 5", fdr: "fdr_version=5", want: fdr(settings.Values{Version: 5}, settings.Version)},
		{name: "version 05", fdr: "fdr_version=05", want: fdr(settings.Values{Version: 5}, settings.Version)},
		{name: "version 3", fdr: "fdr_version=3", warns: warn("fdr_version", "3", "1 or 5")},
		{name: "version v5", fdr: "fdr_version=v5", warns: warn("fdr_version", "v5", "1 or 5")},
		{name: "mode fill", fdr: "mode=fill", want: fdr(settings.Values{Mode: buffer.Fill}, settings.Mode)},
		{name: "mode FILL", fdr: "mode=FILL", want: fdr(settings.Values{Mode: buffer.Fill}, settings.Mode)},
		{name: "mode flight-recorder", fdr: "mode=flight-recorder", want: fdr(settings.Values{Mode: buffer.FlightRecorder}, settings.Mode)},
		{name: "mode flight_recorder", fdr: "mode=flight_recorder", want: fdr(settings.Values{Mode: buffer.FlightRecorder}, settings.Mode)},
		{name: "mode ring", fdr: "mode=ring", warns: warn("mode", "ring", "flight-recorder or fill")},
		{name: "signal USR1", fdr: "flush_signal=USR1", want: sig(syscall.SIGUSR1)},
		{name: "signal SIGUSR2", fdr: "flush_signal=SIGUSR2", want: sig(syscall.SIGUSR2)},
		{name: "signal sigusr1", fdr: "flush_signal=sigusr1", want: sig(syscall.SIGUSR1)},
		{name: "signal hup", fdr: "flush_signal=hup", want: sig(syscall.SIGHUP)},
		{name: "signal none", fdr: "flush_signal=none", want: sig(0)},
		{name: "signal OFF", fdr: "flush_signal=OFF", want: sig(0)},
		{name: "signal number", fdr: "flush_signal=" + strconv.Itoa(int(syscall.SIGUSR2)), want: sig(syscall.SIGUSR2)},
		{name: "signal realtime", fdr: "flush_signal=40", want: sig(40)},
		{name: "signal WINCH", fdr: "flush_signal=WINCH", want: sig(syscall.SIGWINCH)},
		{name: "signal sigwinch", fdr: "flush_signal=sigwinch", want: sig(syscall.SIGWINCH)},
		{name: "signal ALRM", fdr: "flush_signal=ALRM", want: sig(syscall.SIGALRM)},
		{name: "signal VTALRM", fdr: "flush_signal=SIGVTALRM", want: sig(syscall.SIGVTALRM)},
		{name: "signal IO", fdr: "flush_signal=IO", want: sig(syscall.SIGIO)},
		{name: "signal POLL alias", fdr: "flush_signal=POLL", want: sig(syscall.SIGIO)},
		{name: "signal WINCH number", fdr: "flush_signal=" + strconv.Itoa(int(syscall.SIGWINCH)), want: sig(syscall.SIGWINCH)},
		{name: "signal TERM", fdr: "flush_signal=TERM", warns: refused("TERM", syscall.SIGTERM)},
		{name: "signal INT number", fdr: "flush_signal=" + strconv.Itoa(int(syscall.SIGINT)), warns: refused(strconv.Itoa(int(syscall.SIGINT)), syscall.SIGINT)},
		{name: "signal KILL number", fdr: "flush_signal=9", warns: refused("9", syscall.SIGKILL)},
		{name: "signal STOP", fdr: "flush_signal=STOP", warns: refused("STOP", syscall.SIGSTOP)},
		{name: "signal URG", fdr: "flush_signal=" + strconv.Itoa(int(syscall.SIGURG)), warns: refused(strconv.Itoa(int(syscall.SIGURG)), syscall.SIGURG)},
		{name: "signal PROF", fdr: "flush_signal=PROF", warns: refused("PROF", syscall.SIGPROF)},
		{name: "signal CHLD alias", fdr: "flush_signal=CLD", warns: refused("CLD", syscall.SIGCHLD)},
		{name: "signal XFSZ", fdr: "flush_signal=XFSZ", warns: refused("XFSZ", syscall.SIGXFSZ)},
		{name: "signal unknown name", fdr: "flush_signal=WINDOW", warns: warn("flush_signal", "WINDOW", settings.WantSignal)},
		{name: "signal 0", fdr: "flush_signal=0", warns: warn("flush_signal", "0", settings.WantSignal)},
		{name: "signal 65", fdr: "flush_signal=65", warns: refused("65", 65)},
		{name: "signal empty", fdr: "flush_signal=", warns: warn("flush_signal", "", settings.WantSignal)},
		{name: "all together", fdr: "func_duration_threshold_us=2,buffer_size=8192,buffer_max=16,no_file_flush=1,fdr_version=1,mode=fill,flush_signal=USR2",
			want: fdr(settings.Values{MinDuration: 2 * time.Microsecond, BufferSize: 8192, BufferCount: 16, NoFinalFile: true, Version: 1, Mode: buffer.Fill, FlushSignal: syscall.SIGUSR2},
				settings.MinDuration, settings.BufferSize, settings.BufferCount, settings.NoFinalFile, settings.Version, settings.Mode, settings.FlushSignal)},
	})
}

func TestMalformedAndUnknown(t *testing.T) {
	runCases(t, []parseCase{
		{name: "no equals", fdr: "x", warns: []string{`xray: XRAY_FDR_OPTIONS: "x": want name=value (ignored)`}},
		{name: "no equals then a good flag", fdr: "x buffer_size=4096",
			want:  fdr(settings.Values{BufferSize: 4096}, settings.BufferSize),
			warns: []string{`xray: XRAY_FDR_OPTIONS: "x": want name=value (ignored)`}},
		{name: "no name", fdr: "=5", warns: []string{`xray: XRAY_FDR_OPTIONS: "=5": missing flag name (ignored)`}},
		{name: "no name twice equals", xray: "== verbosity=1", want: cfg(Config{Verbosity: 1}, FieldVerbosity),
			warns: []string{`xray: XRAY_OPTIONS: "==": missing flag name (ignored)`}},
		{name: "typo", fdr: "bufer_size=4096",
			warns: []string{`xray: XRAY_FDR_OPTIONS: unknown flag "bufer_size" (ignored; did you mean "buffer_size"?)`}},
		{name: "typo in XRAY_OPTIONS", xray: "patch_premian=true",
			warns: []string{`xray: XRAY_OPTIONS: unknown flag "patch_premian" (ignored; did you mean "patch_premain"?)`}},
		{name: "fdr flag in XRAY_OPTIONS", xray: "buffer_size=4096",
			warns: []string{`xray: XRAY_OPTIONS: unknown flag "buffer_size" (ignored; it belongs in XRAY_FDR_OPTIONS)`}},
		{name: "xray flag in XRAY_FDR_OPTIONS", fdr: "patch_premain=true",
			warns: []string{`xray: XRAY_FDR_OPTIONS: unknown flag "patch_premain" (ignored; it belongs in XRAY_OPTIONS)`}},
		{name: "unknown without hint", xray: "log_path=stderr",
			warns: []string{`xray: XRAY_OPTIONS: unknown flag "log_path" (ignored)`}},
		{name: "names are case-sensitive", fdr: "BUFFER_SIZE=4096",
			warns: []string{`xray: XRAY_FDR_OPTIONS: unknown flag "BUFFER_SIZE" (ignored)`}},
		{name: "control characters stay on one line", fdr: "a\x01\x7fb=1",
			warns: []string{`xray: XRAY_FDR_OPTIONS: unknown flag "a\x01\x7fb" (ignored)`}},
		{name: "unknown does not stop the rest", xray: "foo=1 patch_premain=true bar=2 xray_mode=xray-fdr",
			want: startFDR,
			warns: []string{
				`xray: XRAY_OPTIONS: unknown flag "foo" (ignored)`,
				`xray: XRAY_OPTIONS: unknown flag "bar" (ignored)`,
			}},
	})
}

func TestWarningCap(t *testing.T) {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "unknown%d=1 ", i)
	}
	b.WriteString("buffer_size=4096")
	c, warns := Parse("", b.String())
	if len(warns) != maxWarnings+1 {
		t.Fatalf("%d warnings, want %d", len(warns), maxWarnings+1)
	}
	if got, want := warns[maxWarnings].String(), "xray: XRAY_OPTIONS, XRAY_FDR_OPTIONS: 24 more problems not shown"; got != want {
		t.Errorf("last warning %q, want %q", got, want)
	}
	if !c.Sets.Has(settings.BufferSize) || c.Settings.BufferSize != 4096 {
		t.Errorf("flag after the capped warnings not applied: %+v", c)
	}
}

func TestWarningFields(t *testing.T) {
	_, warns := Parse("verbosity=x", "bufer_size=1 =2")
	want := []Warning{
		{Var: XRayOptionsVar, Flag: "verbosity", Msg: `verbosity="x": want a decimal integer (ignored)`},
		{Var: XRayFDROptionsVar, Flag: "bufer_size", Msg: `unknown flag "bufer_size" (ignored; did you mean "buffer_size"?)`},
		{Var: XRayFDROptionsVar, Msg: `"=2": missing flag name (ignored)`},
	}
	if !reflect.DeepEqual(warns, want) {
		t.Errorf("got %+v\nwant %+v", warns, want)
	}
}

func TestLogfileSplit(t *testing.T) {
	for _, tc := range []struct{ base, dir, prefix string }{
		{"xray-log.", ".", "xray-log."},
		{"", ".", ""},
		{"traces/", "traces", ""},
		{"/tmp/t-", "/tmp", "t-"},
		{"/x", "/", "x"},
		{"/", "/", ""},
		{"a/b/c.", "a/b", "c."},
	} {
		c := Config{LogfileBase: tc.base}
		if d, p := c.LogfileDir(), c.LogfilePrefix(); d != tc.dir || p != tc.prefix {
			t.Errorf("%q: dir %q prefix %q, want %q %q", tc.base, d, p, tc.dir, tc.prefix)
		}
	}
}

func TestFlagsRoundTrip(t *testing.T) {
	x := `patch_premain=true xray_mode=xray-fdr xray_logfile_base="/tmp/a b/x-" verbosity=-2 xray_fdr_log_func_duration_threshold_us=9`
	c, warns := Parse(x, "")
	if len(warns) != 0 {
		t.Fatal(warns)
	}
	gx, gf := c.Flags()
	if wx, wf := `patch_premain=true xray_mode=xray-fdr xray_logfile_base="/tmp/a b/x-" verbosity=-2`, "func_duration_threshold_us=9"; gx != wx || gf != wf {
		t.Errorf("Flags() = %q, %q\nwant %q, %q", gx, gf, wx, wf)
	}
	if c2, w2 := Parse(gx, gf); !reflect.DeepEqual(c2, c) || len(w2) != 0 {
		t.Errorf("round trip: %+v %v, want %+v", c2, w2, c)
	}
	f := "fdr_version=1 buffer_size=8192 buffer_max=16 mode=fill flush_signal=none no_file_flush=false flush_on_exit=true fast_clock=true overhead_budget=off go_trace=true"
	c, _ = Parse("", f)
	if _, gf := c.Flags(); gf != f {
		t.Errorf("Flags() fdr = %q, want %q", gf, f)
	}
	for _, v := range []string{"WINCH", "USR2", "40"} {
		c, w := Parse("", "flush_signal="+v)
		_, gf := c.Flags()
		if c2, w2 := Parse("", gf); len(w) != 0 || len(w2) != 0 || c2.Settings.FlushSignal != c.Settings.FlushSignal || c.Settings.FlushSignal == nil {
			t.Errorf("flush_signal=%s renders %q, which parses as %v (warnings %v %v)", v, gf, c2.Settings.FlushSignal, w, w2)
		}
	}
	if gx, gf := (Config{}).Flags(); gx != "" || gf != "" {
		t.Errorf("empty Config renders %q %q", gx, gf)
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv(XRayOptionsVar, "patch_premain=true xray_mode=xray-fdr")
	t.Setenv(XRayFDROptionsVar, "buffer_max=8 nope=1")
	c, warns := FromEnv()
	want := with(cfg(Config{Start: true, PatchPremain: true, XRayMode: XRayModeFDR}, fdrStart), settings.Values{BufferCount: 8}, settings.BufferCount)
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got %+v, want %+v", c, want)
	}
	if len(warns) != 1 || warns[0].Flag != "nope" {
		t.Errorf("warnings %v", warns)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b  string
		limit int
		want  int
	}{
		{"", "", 3, 0},
		{"abc", "abc", 3, 0},
		{"bufer_size", "buffer_size", 3, 1},
		{"buffer_szie", "buffer_size", 3, 2},
		{"kitten", "sitting", 4, 3},
		{"kitten", "sitting", 3, 3},
		{"a", "abcdef", 3, 3},
	} {
		if got := editDistance(tc.a, tc.b, tc.limit); got != tc.want {
			t.Errorf("editDistance(%q, %q, %d) = %d, want %d", tc.a, tc.b, tc.limit, got, tc.want)
		}
	}
}

// Every signal the platform names is either taken as a flush trigger or
// refused with a reason; the caught-and-harmless ones are taken.
func TestSignalsByName(t *testing.T) {
	for n := syscall.Signal(1); n < 65; n++ {
		name := unix.SignalName(n)
		if name == "" {
			continue
		}
		c, warns := Parse("", "flush_signal="+name)
		switch {
		case settings.RefusedSignal(n):
			if len(warns) != 1 || !strings.Contains(warns[0].Msg, settings.SignalProblem(n)) {
				t.Errorf("%s: refused, but warnings %v", name, warns)
			}
		case len(warns) != 0 || c.Settings.FlushSignal != os.Signal(n):
			t.Errorf("%s: got %v, warnings %v", name, c.Settings.FlushSignal, warns)
		}
	}
	for _, name := range []string{"SIGWINCH", "SIGUSR1", "SIGUSR2", "SIGHUP", "SIGALRM"} {
		if settings.RefusedSignal(unix.SignalNum(name)) {
			t.Errorf("%s refused", name)
		}
	}
}
