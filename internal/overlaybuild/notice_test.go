package overlaybuild

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestSlowPrepareSays: a build whose preparation outlasts slowAfter says
// what it is doing on stderr, before the go command's output; a quick one
// says nothing. The child is this test binary run as goxray (TestMain),
// with slowAfter made 0 or an hour.
func TestSlowPrepareSays(t *testing.T) {
	if os.Getenv("GOXRAY_TEST_SLOW_AFTER") != "" {
		t.Skip("child")
	}
	_, tool, mod := fixture(t, true)
	for _, tc := range []struct {
		after string
		want  bool
	}{{"0s", true}, {"1h", false}} {
		cmd := exec.Command(tool, "build", "-o", os.DevNull, ".")
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOXRAY_TEST_SLOW_AFTER="+tc.after)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("goxray build: %v\n%s", err, out)
		}
		if got := strings.Contains(string(out), prepareNotice+"\n"); got != tc.want {
			t.Errorf("slowAfter %s: notice printed %v, want %v:\n%s", tc.after, got, tc.want, out)
		}
	}
}

func init() {
	// The child's slowAfter (see TestSlowPrepareSays).
	if v := os.Getenv("GOXRAY_TEST_SLOW_AFTER"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			slowAfter = d
		}
	}
}
