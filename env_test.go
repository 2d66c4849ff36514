package xray

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/childproc"
	"github.com/goxray/xray/internal/emulated"
	"github.com/goxray/xray/internal/xrayflags"
	"github.com/goxray/xray/internal/xraytool"
	"github.com/goxray/xray/runtime/buffer"
)

func withEnv(t *testing.T, xo, fo string) {
	t.Helper()
	old := env
	var ws []xrayflags.Warning
	env, ws = xrayflags.Parse(xo, fo)
	if len(ws) != 0 {
		t.Fatalf("warnings: %v", ws)
	}
	t.Cleanup(func() { env = old })
}

func TestEnvironmentFillsZeroOptions(t *testing.T) {
	withEnv(t, "xray_logfile_base=/var/tmp/traces/svc-",
		"buffer_size=8192 buffer_max=4 func_duration_threshold_us=5 no_file_flush=true fdr_version=1 mode=fill flush_signal=none")
	c, err := Options{}.config()
	if err != nil {
		t.Fatal(err)
	}
	if c.Dir != "/var/tmp/traces" || c.FilePrefix != "svc-" || c.BufferSize != 8192 || c.BufferCount != 4 ||
		c.MinDuration != 5*time.Microsecond || !c.NoFinalFile || c.Version != 1 || c.Mode != buffer.Fill || c.FlushSignal != nil {
		t.Errorf("config from the environment: %+v", c)
	}
	// Options win over the environment.
	c, err = Options{Dir: "/x", FilePrefix: "p.", BufferSize: 4096, BufferCount: 9, MinDuration: -1, Version: 5,
		FlushSignal: syscall.SIGUSR2}.config()
	if err != nil {
		t.Fatal(err)
	}
	if c.Dir != "/x" || c.FilePrefix != "p." || c.BufferSize != 4096 || c.BufferCount != 9 || c.MinDuration != 0 ||
		c.Version != 5 || c.FlushSignal != syscall.SIGUSR2 {
		t.Errorf("Options did not override the environment: %+v", c)
	}
	// IgnoreEnv: defaults only.
	c, err = Options{IgnoreEnv: true}.config()
	if err != nil {
		t.Fatal(err)
	}
	if c.BufferSize != DefaultBufferSize || c.FilePrefix != "xray-log." || c.Version != 5 || c.MinDuration != 0 || c.FlushSignal != syscall.SIGUSR1 {
		t.Errorf("IgnoreEnv config: %+v", c)
	}
	// "dir/" as the base: no prefix, files named <program>.XXXXXX.
	withEnv(t, "xray_logfile_base=/tmp/", "")
	if c, _ := (Options{}).config(); c.Dir != "/tmp" || c.FilePrefix != "" {
		t.Errorf("xray_logfile_base=/tmp/: dir %q prefix %q", c.Dir, c.FilePrefix)
	}
}

// The subprocess tests re-run this test binary with GOXRAY_TEST_CHILD set:
// TestChildProcess then plays the traced program.
func TestChildProcess(t *testing.T) {
	switch mode := os.Getenv("GOXRAY_TEST_CHILD"); mode {
	case "premain":
		// Started by XRAY_OPTIONS before main (package init).
		if !Stats().Running {
			os.Stdout.WriteString("not running\n")
			os.Exit(3)
		}
		Enter(1)
		Exit(1)
		if err := Stop(); err != nil {
			os.Stdout.WriteString(err.Error())
			os.Exit(4)
		}
		os.Stdout.WriteString("ok " + Stats().LastFlushPath + "\n")
		os.Exit(0)
	case "premain-start":
		// The Quick start's Start, in a program XRAY_OPTIONS already traces.
		Enter(1)
		var logged []string
		logf := func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }
		if err := Start(Options{Dir: os.Getenv("GOXRAY_TEST_DIR"), BufferSize: 1 << 20, GoTrace: true, Logf: logf}); err != nil {
			os.Stdout.WriteString("Start: " + err.Error() + "\n")
			os.Exit(7)
		}
		if err := Start(Options{}); !errors.Is(err, ErrRunning) {
			os.Stdout.WriteString(fmt.Sprintf("second Start: %v\n", err))
			os.Exit(8)
		}
		Exit(1)
		if err := Stop(); err != nil {
			os.Stdout.WriteString(err.Error())
			os.Exit(4)
		}
		os.Stdout.WriteString("ok " + Stats().LastFlushPath + "\n" + strings.Join(logged, "\n") + "\n")
		os.Exit(0)
	case "exit", "env-exit":
		if mode == "exit" {
			if err := Start(Options{Dir: os.Getenv("GOXRAY_TEST_DIR"), FlushOnExit: true, FlushSignal: NoSignal, Logf: quiet}); err != nil {
				os.Exit(5)
			}
		}
		Enter(2)
		Enter(3)
		Exit(3)
		os.Stdout.WriteString("ready\n")
		time.Sleep(time.Minute) // killed by the parent's SIGTERM
		os.Exit(6)
	}
}

func child(t *testing.T, mode string, env ...string) *exec.Cmd {
	// qemu-user does not follow execve: the child would run natively (or,
	// for another architecture, not at all).
	emulated.SkipIf(t, "the child process would not run under the emulator")
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildProcess$")
	cmd.Env = append(os.Environ(), append(env, "GOXRAY_TEST_CHILD="+mode)...)
	return cmd
}

func TestEnvironmentStartsTracingBeforeMain(t *testing.T) {
	dir := t.TempDir()
	cmd := child(t, "premain",
		"XRAY_OPTIONS=patch_premain=true xray_mode=xray-fdr xray_logfile_base="+dir+"/child-",
		"XRAY_FDR_OPTIONS=flush_signal=none")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	path := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "ok "))
	if filepath.Dir(path) != dir || !strings.HasPrefix(filepath.Base(path), "child-") {
		t.Fatalf("child wrote %q, want a child-* file in %s", path, dir)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := fdr.VerifyStrict(data); err != nil {
		t.Error(err)
	}
}

// TestEnvironmentGoTrace: go_trace=true in XRAY_FDR_OPTIONS writes the
// Go execution trace beside the final file.
func TestEnvironmentGoTrace(t *testing.T) {
	dir := t.TempDir()
	cmd := child(t, "premain",
		"XRAY_OPTIONS=patch_premain=true xray_mode=xray-fdr xray_logfile_base="+dir+"/child-",
		"XRAY_FDR_OPTIONS=flush_signal=none go_trace=true")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	path := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "ok "))
	if st, err := os.Stat(path + ".gotrace"); err != nil || st.Size() == 0 {
		t.Errorf("no Go trace beside %s: %v", path, err)
	}
}

// TestStartComposesWithEnvironment: the Quick start's Start in a program
// that XRAY_OPTIONS started tracing returns nil, takes the Options' Dir,
// keeps the records made before it, says which option it could not apply,
// and a second Start is ErrRunning as usual.
func TestStartComposesWithEnvironment(t *testing.T) {
	envDir, dir := t.TempDir(), t.TempDir()
	cmd := child(t, "premain-start", "GOXRAY_TEST_DIR="+dir,
		"XRAY_OPTIONS=patch_premain=true xray_mode=xray-fdr xray_logfile_base="+envDir+"/env-",
		"XRAY_FDR_OPTIONS=flush_signal=none")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	lines := strings.Split(string(out), "\n")
	path := strings.TrimPrefix(lines[0], "ok ")
	if filepath.Dir(path) != dir {
		t.Fatalf("child wrote %q, want a file in Options.Dir %s\n%s", path, dir, out)
	}
	if !strings.Contains(string(out), "not: BufferSize 1048576 (running with 65536)") {
		t.Errorf("no log line about the BufferSize not applied:\n%s", out)
	}
	if !strings.Contains(string(out), "GoTrace true (running with false)") {
		t.Errorf("no log line about the GoTrace not applied:\n%s", out)
	}
	if _, err := os.Stat(path + ".gotrace"); err == nil {
		t.Errorf("%s.gotrace written by a session that runs without GoTrace", path)
	}
	f, err := fdr.ParseFileStrict(path)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := f.Events()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		if e.Type == fdr.EventCustom {
			continue // the goroutine's anchor or lineage event (fdr's doc)
		}
		got = append(got, fmt.Sprintf("%v %d", e.Type, e.FuncID))
	}
	if len(got) != 2 || !strings.HasSuffix(got[0], " 1") || !strings.HasSuffix(got[1], " 1") {
		t.Errorf("records %v, want the Enter before Start and the Exit after it", got)
	}
}

func TestEnvironmentBadFlagsWarnAndContinue(t *testing.T) {
	cmd := child(t, "none", "XRAY_FDR_OPTIONS=bufer_size=10 buffer_max=abc")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for _, want := range []string{`unknown flag "bufer_size"`, "buffer_max"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("stderr lacks %q:\n%s", want, out)
		}
	}
}

// TestFlushOnExit: SIGTERM writes the final file, then the process dies of
// the signal as it would have.
func TestFlushOnExit(t *testing.T) {
	t.Run("Options", func(t *testing.T) {
		dir := t.TempDir()
		testFlushOnExit(t, dir, child(t, "exit", "GOXRAY_TEST_DIR="+dir))
	})
	// XRAY_OPTIONS alone, with flush_on_exit=true in XRAY_FDR_OPTIONS.
	t.Run("environment", func(t *testing.T) {
		dir := t.TempDir()
		testFlushOnExit(t, dir, child(t, "env-exit",
			"XRAY_OPTIONS=patch_premain=true xray_mode=xray-fdr xray_logfile_base="+dir+"/xray-log.",
			"XRAY_FDR_OPTIONS=flush_on_exit=true flush_signal=none"))
	})
}

func testFlushOnExit(t *testing.T, dir string, cmd *exec.Cmd) {
	bin := xraytool.Bin(t)
	childproc.StartReady(t, cmd)
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); !childproc.KilledBy(err, syscall.SIGTERM) {
		t.Fatalf("child ended with %v, want death by SIGTERM", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "xray-log.*"))
	var trace string
	for _, f := range files {
		if !strings.HasSuffix(f, ".map") {
			trace = f
		}
	}
	if trace == "" {
		t.Fatalf("no final file in %s: %v", dir, files)
	}
	tr := xraytool.Check(t, bin, trace)
	if len(tr.Records) > 0 && strings.HasPrefix(tr.Records[0].Data, fdr.LineagePrefix) {
		tr.Records = tr.Records[1:] // the lineage event
	}
	if len(tr.Records) != 3 {
		t.Errorf("%d records, want Enter 2, Enter 3, Exit 3", len(tr.Records))
	}
}
