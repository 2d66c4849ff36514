package flush

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

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
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if n, err := stdout.Read(buf); err != nil || string(buf[:n]) != "ready\n" {
		cmd.Wait()
		t.Fatalf("child said %q (%v)", buf[:n], err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
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
