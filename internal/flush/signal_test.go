package flush

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/goxray/xray/internal/childproc"
	"github.com/goxray/xray/internal/emulated"
)

// TestNotifyExitSurvivesSecondSignal: a second SIGTERM and a SIGINT that
// arrive while the final flush runs (after it stopped listening, as
// stopping a session does) neither kill the process before the flush is
// done nor run it twice; then the first signal ends the process as it
// would have.
func TestNotifyExitSurvivesSecondSignal(t *testing.T) {
	if out := os.Getenv("GOXRAY_NOTIFY_CHILD"); out != "" {
		var stop func()
		calls := 0
		stop = NotifyExit(func() {
			calls++
			stop() // what Stop does first: unnotify
			syscall.Kill(os.Getpid(), syscall.SIGTERM)
			syscall.Kill(os.Getpid(), syscall.SIGINT)
			time.Sleep(200 * time.Millisecond) // the flush
			os.WriteFile(out, []byte{byte('0' + calls)}, 0o644)
		}, syscall.SIGTERM, syscall.SIGINT)
		os.Stdout.WriteString("ready\n")
		time.Sleep(time.Minute)
		os.Exit(6)
	}
	emulated.SkipIf(t, "signals to a child under the emulator are not the point here")
	out := filepath.Join(t.TempDir(), "flushed")
	cmd := exec.Command(os.Args[0], "-test.run=^TestNotifyExitSurvivesSecondSignal$")
	cmd.Env = append(os.Environ(), "GOXRAY_NOTIFY_CHILD="+out)
	childproc.StartReady(t, cmd)
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); !childproc.KilledBy(err, syscall.SIGTERM) {
		t.Errorf("child ended with %v, want death by SIGTERM", err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the flush did not finish: %v", err)
	}
	if string(b) != "1" {
		t.Errorf("the flush ran %q times, want once", b)
	}
}
