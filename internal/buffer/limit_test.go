package buffer

import (
	"os"
	"path/filepath"
	"testing"
)

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMemoryLimit reads cgroup v2 and v1 limits from a fake file system:
// the tightest of the group and its ancestors, "max" and v1's huge value
// meaning none.
func TestMemoryLimit(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "self")
	root := filepath.Join(dir, "fs")

	writeFile(t, self, "0::/a/b\n")
	writeFile(t, filepath.Join(root, "a/b/memory.max"), "max\n")
	writeFile(t, filepath.Join(root, "a/memory.max"), "1073741824\n")
	writeFile(t, filepath.Join(root, "memory.max"), "2147483648\n")
	if lim, src := memoryLimit(self, root); lim != 1<<30 || src != filepath.Join(root, "a/memory.max") {
		t.Errorf("v2: %d from %q, want 1 GiB from a/memory.max", lim, src)
	}

	writeFile(t, self, "12:cpu:/\n4:memory,foo:/pod/c\n0::/\n")
	writeFile(t, filepath.Join(root, "memory/pod/c/memory.limit_in_bytes"), "9223372036854771712\n")
	writeFile(t, filepath.Join(root, "memory/pod/memory.limit_in_bytes"), "536870912\n")
	if lim, _ := memoryLimit(self, root); lim != 512<<20 {
		t.Errorf("v1: %d, want 512 MiB", lim)
	}

	writeFile(t, self, "0::/none\n")
	os.Remove(filepath.Join(root, "memory.max"))
	if lim, src := memoryLimit(self, root); lim != 0 || src != "" {
		t.Errorf("no limit: %d from %q", lim, src)
	}
	if lim, _ := memoryLimit(filepath.Join(dir, "missing"), root); lim != 0 {
		t.Errorf("no /proc/self/cgroup: %d", lim)
	}
}
