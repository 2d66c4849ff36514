package analysis

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/goxray/xray/internal/xraytool"
)

// crtTrace builds testdata/crt.c with clang-19 -fxray-instrument, runs it
// in FDR mode and returns the binary (its own instrumentation map) and the
// trace. A missing clang-19 or compiler-rt fails the test: install them
// with `apt-get install -y clang-19 libclang-rt-19-dev`.
func crtTrace(t testing.TB) (bin, trace string) {
	t.Helper()
	xraytool.NeedExec(t, "clang-19", "apt-get install -y clang-19 libclang-rt-19-dev")
	crtOnce.Do(func() {
		crtBin, crtFile, crtErr = buildCRT()
	})
	if crtErr != nil {
		t.Fatalf("compiler-rt program: %v (install clang-19 and libclang-rt-19-dev)", crtErr)
	}
	return crtBin, crtFile
}

var (
	crtOnce         sync.Once
	crtBin, crtFile string
	crtErr          error
	crtDir          string
)

func buildCRT() (string, string, error) {
	clang, err := exec.LookPath("clang-19")
	if err != nil {
		return "", "", err
	}
	dir, err := os.MkdirTemp("", "goxray-analysis-crt")
	if err != nil {
		return "", "", err
	}
	crtDir = dir
	bin := filepath.Join(dir, "crt")
	src, _ := filepath.Abs("testdata/crt.c")
	cmd := exec.Command(clang, "-g", "-O1", "-fxray-instrument", "-fxray-instruction-threshold=1", src, "-o", bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", &exec.ExitError{ProcessState: cmd.ProcessState, Stderr: out}
	}
	logs := filepath.Join(dir, "logs") + "/"
	if err := os.Mkdir(logs, 0o755); err != nil {
		return "", "", err
	}
	run := exec.Command(bin)
	run.Env = append(os.Environ(), "XRAY_OPTIONS=patch_premain=false xray_mode=xray-fdr xray_logfile_base="+logs)
	run.Stdout, run.Stderr = io.Discard, io.Discard
	if err := run.Run(); err != nil {
		return "", "", err
	}
	files, _ := filepath.Glob(logs + "*")
	if len(files) != 1 {
		return "", "", os.ErrNotExist
	}
	return bin, files[0], nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	if crtDir != "" {
		os.RemoveAll(crtDir)
	}
	os.Exit(code)
}

// events reads every event of a trace, copying what the Reader reuses.
func events(t testing.TB, path string) []Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []Event
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		c := *e
		c.Args = append([]uint64(nil), e.Args...)
		c.Data = append([]byte(nil), e.Data...)
		out = append(out, c)
	}
}

func testdata(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob("../../fdr/testdata/*.xray")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	return files
}
