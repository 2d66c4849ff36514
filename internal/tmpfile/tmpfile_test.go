package tmpfile

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

const prefix = "xray-log.svc."

// deadPid returns a pid no process here has: above any pid_max Linux
// allows (2^22), and checked.
func deadPid(t *testing.T) int {
	t.Helper()
	for pid := 1<<31 - 2; pid > 1<<30; pid-- {
		if gone(pid) {
			return pid
		}
	}
	t.Fatal("no unused pid found")
	return 0
}

// livePid returns the pid of a process that runs, not this one: the
// parent, pid 1, or (for a test that is pid 1 without a parent) a child
// started for the test.
func livePid(t *testing.T) int {
	t.Helper()
	for _, pid := range []int{os.Getppid(), 1} {
		if pid > 0 && pid != os.Getpid() && !gone(pid) {
			return pid
		}
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatalf("no other running process found, and none started: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

func tempName(pid int, rnd string) string {
	return "." + prefix + strconv.Itoa(pid) + "-" + rnd + ".tmp"
}

func put(t *testing.T, dir, name string, size int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, e := range ents {
		n = append(n, e.Name())
	}
	return n
}

func TestOwner(t *testing.T) {
	for _, c := range []struct {
		name string
		pid  int
	}{
		{".xray-log.svc.4242-AbC09z.tmp", 4242},
		{".xray-log.svc.1-zzzzzz.tmp", 1},
		{".xray-log.svc.2147483647-AAAAAA.tmp", 1<<31 - 1},
		{".xray-log.svc.2147483648-AAAAAA.tmp", 0},  // not a pid
		{".xray-log.svc.0-AAAAAA.tmp", 0},           // not a pid
		{".xray-log.svc.+12-AAAAAA.tmp", 0},         // not digits
		{".xray-log.svc.12-AAAAA.tmp", 0},           // random part too short
		{".xray-log.svc.12-AAAA-A.tmp", 0},          // not a random character
		{".xray-log.svc.-AAAAAA.tmp", 0},            // no pid
		{".xray-log.svc.12-AAAAAA", 0},              // no .tmp
		{"xray-log.svc.12-AAAAAA.tmp", 0},           // not hidden
		{".xray-log.svc.1234567890.tmp", 0},         // os.CreateTemp's names
		{".xray-log.svc.x.12-AAAAAA.tmp", 0},        // a longer prefix's (Program "svc.x")
		{".xray-log.svc.1-2.12-AAAAAA.tmp", 0},      // a longer prefix's (Program "svc.1-2")
		{".xray-log.other.12-AAAAAA.tmp", 0},        // another program's
		{".xray-log.svc.12-AAAAAA.tmp.gotrace", 0},  // not a temporary
		{".xray-log.svc.99999999999-AAAAAA.tmp", 0}, // pid too long
		{".xray-log.svc.00000000001-AAAAAA.tmp", 0}, // 11 digits
		{".xray-log.svc.0000000001-AAAAAA.tmp", 1},  // 10 digits (Create never pads, but it is one)
		{".xray-log.svc.12-AAAAAA.tmp/", 0},         // not a base name
		{"..xray-log.svc.12-AAAAAA.tmp", 0},         // another prefix
		{".xray-log.svc.12-AAAAAA.tmp.tmp", 0},      // random part too long
		{"", 0},
	} {
		pid, ok := Owner(c.name, prefix)
		if ok != (c.pid != 0) || pid != c.pid {
			t.Errorf("Owner(%q) = %d, %v; want %d", c.name, pid, ok, c.pid)
		}
	}
}

// TestCreateNamesAndLocks: Create's name says this process, fits
// MaxExtra, and the file is locked until Close.
func TestCreateNamesAndLocks(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir, prefix)
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Base(f.Name())
	if pid, ok := Owner(base, prefix); !ok || pid != os.Getpid() {
		t.Errorf("Create named %q: Owner says %d, %v", base, pid, ok)
	}
	if n := len(base) - len(prefix); n > MaxExtra {
		t.Errorf("%q adds %d bytes to the prefix, more than MaxExtra %d", base, n, MaxExtra)
	}
	other, err := os.Open(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := tryLock(other); err != errBusy {
		t.Errorf("locking a file Create returned: %v, want it held", err)
	}
	f.Close()
	if err := tryLock(other); err != nil {
		t.Errorf("locking it after Close: %v", err)
	}
}

// TestSweep: a temporary goes when nobody holds its lock and its
// writer's pid is gone, or is the sweeper's own (a predecessor's, as a
// container restarted as pid 1 leaves), or it was last written StaleAge
// ago; a live writer's stays, whatever its name says, and so do names
// that are not temporaries of the prefix.
func TestSweep(t *testing.T) {
	dir := t.TempDir()
	dead, other := deadPid(t), livePid(t)
	put(t, dir, tempName(dead, "AAAAAA"), 1000)                         // killed mid-flush
	put(t, dir, tempName(os.Getpid(), "BBBBBB"), 200)                   // a predecessor with this pid
	put(t, dir, tempName(other, "CCCCCC"), 30)                          // unlocked, its pid runs, fresh
	put(t, dir, tempName(dead, "DDDDDD"), 4)                            // a live writer in another pid namespace
	put(t, dir, ".xray-log.other."+strconv.Itoa(dead)+"-EEEEEE.tmp", 5) // another prefix
	put(t, dir, ".xray-log.svc.1234567.tmp", 6)                         // not a name Create gives
	put(t, dir, "xray-log.svc.FFFFFF", 7)                               // a finished file
	locked, err := os.Open(filepath.Join(dir, tempName(dead, "DDDDDD")))
	if err != nil {
		t.Fatal(err)
	}
	defer locked.Close()
	if err := tryLock(locked); err != nil {
		t.Fatal(err)
	}
	live, err := Create(dir, prefix) // a flush of this process, under way
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	live.Write(make([]byte, 3))

	got := Sweep(dir, prefix)
	if want := (Swept{Removed: 2, RemovedBytes: 1200, Left: 3, LeftBytes: 37}); got != want {
		t.Errorf("Sweep = %+v, want %+v", got, want)
	}
	want := []string{
		tempName(other, "CCCCCC"), tempName(dead, "DDDDDD"),
		".xray-log.other." + strconv.Itoa(dead) + "-EEEEEE.tmp", ".xray-log.svc.1234567.tmp",
		"xray-log.svc.FFFFFF", filepath.Base(live.Name()),
	}
	slices.Sort(want)
	if got := names(t, dir); !slices.Equal(got, want) {
		t.Errorf("left %q\nwant %q", got, want)
	}

	// An hour on, the unlocked one whose pid runs (reused, or of another
	// namespace) is taken for a dead writer's; the locked ones never are.
	later := time.Now().Add(StaleAge + time.Minute)
	if removed, size := RemoveStale(dir, tempName(other, "CCCCCC"), other, later); !removed || size != 30 {
		t.Errorf("stale by age: removed %v (%d bytes)", removed, size)
	}
	for _, name := range []string{tempName(dead, "DDDDDD"), filepath.Base(live.Name())} {
		pid, _ := Owner(name, prefix)
		if removed, _ := RemoveStale(dir, name, pid, later); removed {
			t.Errorf("removed %s, whose writer holds its lock", name)
		}
	}
	// Once its writer closed it (the process died), the other namespace's
	// temporary goes.
	locked.Close()
	if removed, size := RemoveStale(dir, tempName(dead, "DDDDDD"), dead, time.Now()); !removed || size != 4 {
		t.Errorf("after its writer closed it: removed %v (%d bytes)", removed, size)
	}
}
