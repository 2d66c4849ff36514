package xray

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goxray/xray/internal/childproc"
	"github.com/goxray/xray/internal/emulated"
	"github.com/goxray/xray/internal/flush"
	"github.com/goxray/xray/internal/tmpfile"
)

// temps returns the names of the temporaries of prefix in dir, with the
// pid each names and its size.
func temps(t *testing.T, dir, prefix string) map[string][2]int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]int64{}
	for _, e := range ents {
		if pid, ok := tmpfile.Owner(e.Name(), prefix); ok {
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name()] = [2]int64{int64(pid), fi.Size()}
		}
	}
	return out
}

// TestStartRemovesKilledFlushTemp: a process killed (SIGKILL) in the
// middle of writing a file leaves its hidden temporary in Dir; the next
// Start there removes it and says so (Logf, Stats), and leaves alone the
// temporary of a flush under way in this process. One that a process
// sharing Dir leaves later goes at the next flush.
func TestStartRemovesKilledFlushTemp(t *testing.T) {
	const prefix = "xray-log.killed."
	if dir := os.Getenv("GOXRAY_KILLED_FLUSH_DIR"); dir != "" {
		// The child: a flush, through the writer Flush writes its files
		// with, that stops halfway.
		flush.WriteFiles(dir, prefix, func(w io.Writer) error {
			if _, err := w.Write(make([]byte, 1<<20)); err != nil {
				os.Exit(5)
			}
			os.Stdout.WriteString("ready\n")
			time.Sleep(time.Minute) // killed by the parent's SIGKILL
			os.Exit(6)
			return nil
		}, nil)
		os.Exit(7)
	}
	emulated.SkipIf(t, "the child process would not run under the emulator")
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStartRemovesKilledFlushTemp$")
	cmd.Env = append(os.Environ(), "GOXRAY_KILLED_FLUSH_DIR="+dir)
	childproc.StartReady(t, cmd)
	// While the child writes, its lock keeps its temporary from any
	// sweep, even one that takes the file for an hour old.
	for name := range temps(t, dir, prefix) {
		if removed, _ := tmpfile.RemoveStale(dir, name, cmd.Process.Pid, time.Now().Add(2*tmpfile.StaleAge)); removed {
			t.Errorf("a sweep removed %s while its writer held it", name)
		}
	}
	cmd.Process.Kill()
	if err := cmd.Wait(); !childproc.KilledBy(err, syscall.SIGKILL) {
		t.Fatalf("child ended with %v, want death by SIGKILL", err)
	}
	left := temps(t, dir, prefix)
	if len(left) != 1 {
		t.Fatalf("the killed child left %v, want one temporary", left)
	}
	for name, v := range left {
		if v != [2]int64{int64(cmd.Process.Pid), 1 << 20} {
			t.Fatalf("the killed child left %s (pid, size %v), want pid %d and 1 MiB", name, v, cmd.Process.Pid)
		}
	}

	live, err := tmpfile.Create(dir, prefix) // a flush of this process, under way
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	var (
		logMu  sync.Mutex
		logged []string
	)
	logf := func(format string, args ...any) {
		logMu.Lock()
		logged = append(logged, fmt.Sprintf(format, args...))
		logMu.Unlock()
	}
	if err := Start(Options{Dir: dir, Program: "killed", FlushSignal: NoSignal, Logf: logf, IgnoreEnv: true,
		NoFinalFile: true, BufferSize: 4096, BufferCount: 16}); err != nil {
		t.Fatal(err)
	}
	defer Stop()
	want := map[string][2]int64{filepath.Base(live.Name()): {int64(os.Getpid()), 0}}
	if got := temps(t, dir, prefix); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after Start: %v, want %v", got, want)
	}
	if st := Stats(); st.TempFilesDeleted != 1 || st.TempFileBytesDeleted != 1<<20 {
		t.Errorf("Stats: %d temporary files (%d bytes) deleted, want 1 (1 MiB)", st.TempFilesDeleted, st.TempFileBytesDeleted)
	}
	logMu.Lock()
	said := strings.Join(logged, "\n")
	logMu.Unlock()
	if !strings.Contains(said, "removed temporary files that flushes killed mid-write left in "+dir+": 1 (1048576 bytes") {
		t.Errorf("Logf said %q, nothing of the temporary removed", said)
	}

	// Pid 2147483646 is above any pid_max: no process has it.
	if err := os.WriteFile(filepath.Join(dir, ".xray-log.killed.2147483646-AAAAAA.tmp"), make([]byte, 10), 0o600); err != nil {
		t.Fatal(err)
	}
	record(10)
	if _, err := Flush(); err != nil {
		t.Fatal(err)
	}
	if got := temps(t, dir, prefix); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after a flush: %v, want %v", got, want)
	}
	if st := Stats(); st.TempFilesDeleted != 2 || st.TempFileBytesDeleted != 1<<20+10 {
		t.Errorf("Stats after a flush: %d temporary files (%d bytes) deleted, want 2 (1 MiB + 10)", st.TempFilesDeleted, st.TempFileBytesDeleted)
	}
}
