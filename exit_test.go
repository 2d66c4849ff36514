package xray

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/emulated"
	"github.com/goxray/xray/internal/xraytool"
)

// stopAndExitDir, set in a child's environment, makes TestStopAndExit
// the child: it records, then ends through StopAndExit.
const stopAndExitDir = "GOXRAY_TEST_STOP_AND_EXIT"

// TestStopAndExit: a program that ends through StopAndExit (where it, or
// a library it hands the function to, would call os.Exit) leaves its
// final file with every record, and exits with its code.
func TestStopAndExit(t *testing.T) {
	if dir := os.Getenv(stopAndExitDir); dir != "" {
		if err := Start(Options{Dir: dir, FlushSignal: NoSignal, Logf: quiet, IgnoreEnv: true}); err != nil {
			os.Exit(5)
		}
		Enter(2)
		Enter(3)
		Exit(3)
		StopAndExit(7)
	}
	emulated.SkipIf(t, "the child process would not run under the emulator")
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStopAndExit$")
	cmd.Env = append(os.Environ(), stopAndExitDir+"="+dir)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("child: %v, want exit status 7\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "xray-log.*"))
	var trace string
	for _, f := range files {
		if !strings.HasSuffix(f, ".map") {
			trace = f
		}
	}
	if trace == "" {
		t.Fatalf("no final file in %s: %v\n%s", dir, files, out)
	}
	tr := xraytool.Check(t, xraytool.Bin(t), trace)
	if len(tr.Records) > 0 && strings.HasPrefix(tr.Records[0].Data, fdr.LineagePrefix) {
		tr.Records = tr.Records[1:] // the lineage event
	}
	if len(tr.Records) != 3 {
		t.Errorf("%d records, want Enter 2, Enter 3, Exit 3", len(tr.Records))
	}
}
