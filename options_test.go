package xray

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goxray/xray/internal/settings"
	"github.com/goxray/xray/internal/xrayflags"
)

// TestStartRefusesBadOptions: every refusal happens at Start, wraps
// ErrInvalidOptions, names the field, and leaves tracing off.
func TestStartRefusesBadOptions(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("p", 230)
	fields := ""
	for _, c := range []struct {
		field string
		o     Options
	}{
		{"BufferSize", Options{BufferSize: 1000}},
		{"BufferSize", Options{BufferSize: 4097}},
		{"BufferSize", Options{BufferSize: 4<<30 + 64}}, // above internal/buffer's 2 GiB
		{"BufferCount", Options{BufferCount: 1}},
		{"BufferCount", Options{BufferCount: -5}},
		{"Version", Options{Version: 3}},
		{"Mode", Options{Mode: Mode(7)}},
		{"Dir", Options{Dir: filepath.Join(dir, "missing")}},
		{"Dir", Options{Dir: file}},
		{"Program", Options{Program: "a/b"}},
		{"Program", Options{Program: "a\x00b"}},
		{"FilePrefix", Options{FilePrefix: "logs/x-"}},
		{"FilePrefix", Options{FilePrefix: "x\x00"}},
		{"FilePrefix+Program", Options{Program: long, FilePrefix: "xray-log-with-a-long-prefix."}},
		{"FlushSignal", Options{FlushSignal: syscall.SIGURG}},
		{"FlushSignal", Options{FlushSignal: syscall.SIGPROF}},
		{"FlushSignal", Options{FlushSignal: syscall.SIGSEGV}},
		{"FlushSignal", Options{FlushSignal: syscall.SIGKILL}},
		{"FlushSignal", Options{FlushSignal: os.Interrupt}},
		{"FlushSignal", Options{FlushSignal: syscall.Signal(200)}}, // no such signal: it would never arrive
		{"OverheadBudget", Options{OverheadBudget: -2}},
		{"OverheadBudget", Options{OverheadBudget: 101}},
		{"OverheadBudget", Options{OverheadBudget: math.NaN()}},
		{"GoTrace", Options{GoTrace: true, Mode: Fill}},
	} {
		fields += " " + c.field + " "
		o := c.o
		if o.Dir == "" {
			o.Dir = dir
		}
		o.Logf, o.IgnoreEnv = quiet, true
		err := Start(o)
		if err == nil {
			Stop()
			t.Errorf("Start(%+v) succeeded", c.o)
			continue
		}
		if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), c.field+" ") {
			t.Errorf("Start(%+v) = %v, want ErrInvalidOptions naming %s", c.o, err, c.field)
		}
		if Stats().Running {
			t.Fatalf("Start(%+v) failed but tracing is on", c.o)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Errorf("Start left files in Dir: %v", left)
	}
	// Every setting the schema validates has a refused value above.
	for i := range settings.Table {
		if e := &settings.Table[i]; e.Checked() && !strings.Contains(fields, " "+e.Field+" ") {
			t.Errorf("%s is validated, but no case here refuses a value of it", e.Field)
		}
	}
}

// TestGoTraceRefusesFill: GoTrace with Mode Fill fails Start naming both,
// whether Options or XRAY_FDR_OPTIONS ask for either.
func TestGoTraceRefusesFill(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		env string
		o   Options
	}{
		{"", Options{GoTrace: true, Mode: Fill, IgnoreEnv: true}},
		{"go_trace=true mode=fill", Options{}},
		{"go_trace=true", Options{Mode: Fill}},
		{"mode=fill", Options{GoTrace: true}},
	} {
		withEnv(t, "", c.env)
		o := c.o
		o.Dir, o.Logf, o.FlushSignal = dir, quiet, NoSignal
		err := Start(o)
		if err == nil {
			Stop()
			t.Errorf("env %q, Options %+v: Start succeeded", c.env, c.o)
			continue
		}
		if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "GoTrace true: with Mode Fill") || !strings.Contains(err.Error(), "mode=flight-recorder") {
			t.Errorf("env %q, Options %+v: %v, want ErrInvalidOptions naming GoTrace, Mode Fill and the way out", c.env, c.o, err)
		}
	}
	withEnv(t, "", "mode=fill")
	if err := Start(Options{Dir: dir, Logf: quiet, FlushSignal: NoSignal}); err != nil {
		t.Errorf("Fill without GoTrace: %v", err)
	} else {
		Stop()
	}
}

// TestStartRefusesUnwritableDir: a Dir the process cannot create files in
// fails Start, not the first flush.
func TestStartRefusesUnwritableDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	if f, err := os.CreateTemp(dir, "probe"); err == nil {
		// Root ignores permission bits; /proc takes no files from anyone.
		f.Close()
		os.Remove(f.Name())
		dir = "/proc"
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Skip("running as root without /proc: no directory refuses files")
		}
	}
	err := Start(Options{Dir: dir, Logf: quiet, IgnoreEnv: true, FlushSignal: NoSignal})
	if err == nil {
		Stop()
		t.Fatal("Start into a read-only directory succeeded")
	}
	if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "Dir") {
		t.Errorf("Start = %v", err)
	}
}

// TestFlushSignalMatchesEnvironment: Options.FlushSignal refuses exactly
// the signals XRAY_FDR_OPTIONS' flush_signal refuses.
func TestFlushSignalMatchesEnvironment(t *testing.T) {
	dir := t.TempDir()
	for n := 1; n <= 64; n++ {
		sig := syscall.Signal(n)
		_, warns := xrayflags.Parse("", "flush_signal="+itoa(n))
		envRefuses := len(warns) != 0
		if envRefuses != settings.RefusedSignal(sig) {
			t.Fatalf("signal %d: Parse and RefusedSignal disagree", n)
		}
		if n == int(syscall.SIGUSR1) || n == int(syscall.SIGUSR2) || n == int(syscall.SIGHUP) {
			continue // a real flush trigger: covered elsewhere, and not worth delivering here
		}
		err := Start(Options{Dir: dir, Logf: quiet, IgnoreEnv: true, FlushSignal: sig})
		if err == nil {
			Stop()
		}
		if refused := errors.Is(err, ErrInvalidOptions); refused != envRefuses {
			t.Errorf("signal %d (%v): Start refused %v, XRAY_FDR_OPTIONS refuses %v (err %v)", n, sig, refused, envRefuses, err)
		}
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// TestFlushOnWINCH: a signal servers rarely own, whose default action is
// to do nothing, works as the flush trigger.
func TestFlushOnWINCH(t *testing.T) {
	dir := t.TempDir()
	logged := make(chan string, 64)
	logf := func(format string, args ...any) {
		select {
		case logged <- fmt.Sprintf(format, args...):
		default:
		}
	}
	if err := Start(Options{Dir: dir, FlushSignal: syscall.SIGWINCH, Logf: logf, IgnoreEnv: true, NoFinalFile: true}); err != nil {
		t.Fatal(err)
	}
	defer Stop()
	record(10)
	if err := syscall.Kill(os.Getpid(), syscall.SIGWINCH); err != nil {
		t.Fatal(err)
	}
	// A generous bound, only so that a lost signal fails instead of hanging.
	deadline := time.After(time.Minute)
	for {
		select {
		case line := <-logged:
			if strings.HasPrefix(line, "flush on SIGWINCH: wrote "+dir) {
				return
			}
			t.Logf("log: %s", line)
		case <-deadline:
			t.Fatal("no flush on SIGWINCH")
		}
	}
}
