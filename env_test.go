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
	"github.com/goxray/xray/internal/buffer"
	"github.com/goxray/xray/internal/childproc"
	"github.com/goxray/xray/internal/emulated"
	"github.com/goxray/xray/internal/xrayflags"
	"github.com/goxray/xray/internal/xraytool"
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

// TestLogfileBaseDirectory: compiler-rt's prefix meaning holds, except for
// a base without '/' at the end that names an existing directory.
func TestLogfileBaseDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ base, dir, prefix string }{
		{dir, dir, ""},                     // an existing directory, no trailing '/'
		{dir + "/", dir, ""},               // the documented way to say it
		{dir + "/svc-", dir, "svc-"},       // directory and prefix
		{dir + "/missing", dir, "missing"}, // no such directory: a prefix
		{"svc-", ".", "svc-"},              // a prefix in the working directory
		{filepath.Join(dir, "..") + "/x-", filepath.Dir(dir), "x-"}, // Clean'd by filepath.Join
	} {
		withEnv(t, "xray_logfile_base="+tc.base, "")
		c, err := Options{}.config()
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Clean(c.Dir) != filepath.Clean(tc.dir) || c.FilePrefix != tc.prefix {
			t.Errorf("xray_logfile_base=%s: dir %q prefix %q, want %q %q", tc.base, c.Dir, c.FilePrefix, tc.dir, tc.prefix)
		}
	}
}

// TestEnvironmentSaysTracingStarted: tracing started by XRAY_OPTIONS says
// so, once, on stderr, with where files go and how to flush; a base that
// is a directory is said too.
func TestEnvironmentSaysTracingStarted(t *testing.T) {
	dir := t.TempDir()
	cmd := child(t, "premain",
		"XRAY_OPTIONS=patch_premain=true xray_mode=xray-fdr xray_logfile_base="+dir,
		"XRAY_FDR_OPTIONS=flush_signal=WINCH")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s\n%s", err, out, stderr.String())
	}
	want := fmt.Sprintf("xray: tracing since program start (XRAY_OPTIONS): files go to %s/%s.XXXXXX with a .map beside each; flush with kill -WINCH %d\n",
		dir, filepath.Base(os.Args[0]), cmd.Process.Pid)
	if strings.Count(stderr.String(), "tracing since program start") != 1 || !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr:\n%s\nwant the line\n%s", stderr.String(), want)
	}
	if !strings.Contains(stderr.String(), fmt.Sprintf("xray_logfile_base=%q is a directory", dir)) {
		t.Errorf("stderr does not say the base is a directory:\n%s", stderr.String())
	}
	path := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "ok "))
	if filepath.Dir(path) != dir {
		t.Errorf("child wrote %q, want a file in %s", path, dir)
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
	case "logline":
		// go test -bench's pattern: the name, the benchmark (during which
		// goxray logs from a goroutine of its own), the result.
		c, err := Options{IgnoreEnv: true}.config()
		if err != nil {
			os.Exit(9)
		}
		os.Stdout.WriteString("BenchmarkX-2   \t")
		done := make(chan struct{})
		go func() { c.Logf("%d functions shed", 3); close(done) }()
		<-done
		os.Stdout.WriteString("     100\t        12.0 ns/op\n")
		Stop() // not running: only lets held lines out
		os.Stdout.WriteString("PASS\n")
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

// TestLogLinesKeepStdoutLinesWhole: with stdout and stderr the same file
// or the same pipe (go test's), a log line from goxray's goroutines does
// not cut a benchmark's result line in two.
func TestLogLinesKeepStdoutLinesWhole(t *testing.T) {
	check := func(t *testing.T, out string) {
		t.Helper()
		var bench, logged bool
		for _, l := range strings.Split(out, "\n") {
			switch {
			case l == "BenchmarkX-2   \t     100\t        12.0 ns/op":
				bench = true
			case strings.HasPrefix(l, "xray: ") && strings.HasSuffix(l, " 3 functions shed"):
				logged = true
			}
		}
		if !bench || !logged {
			t.Errorf("benchmark line whole: %v, log line whole: %v; output:\n%s", bench, logged, out)
		}
	}
	t.Run("file", func(t *testing.T) {
		f, err := os.Create(filepath.Join(t.TempDir(), "out"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd := child(t, "logline")
		cmd.Stdout, cmd.Stderr = f, f // 2>&1
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		out, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		check(t, string(out))
	})
	t.Run("pipe", func(t *testing.T) {
		cmd := child(t, "logline")
		cmd.Args = append(cmd.Args, "-test.bench=^$") // a test binary running benchmarks, as go test -bench runs it
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		check(t, string(out))
	})
}
