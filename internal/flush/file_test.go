package flush

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/goxray/xray/internal/traceset"
)

// TestWriteFilesLeavesNothingOnError: a flush whose trace or side file
// fails to write leaves nothing in the directory, neither a file nor a
// temporary; one that succeeds leaves exactly the trace and its map.
func TestWriteFilesLeavesNothingOnError(t *testing.T) {
	boom := errors.New("boom")
	ok := func(w io.Writer) error { _, err := w.Write([]byte("data")); return err }
	failing := func(w io.Writer) error {
		if _, err := w.Write(make([]byte, 1<<16)); err != nil {
			return err
		}
		return boom
	}
	for name, c := range map[string]struct{ write, side func(io.Writer) error }{
		"trace": {failing, ok},
		"side":  {ok, failing},
		"alone": {failing, nil},
	} {
		dir := t.TempDir()
		if _, err := WriteFiles(dir, "xray-log.fail.", c.write, c.side); !errors.Is(err, boom) {
			t.Errorf("%s: err %v, want boom", name, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%s: the failed flush left %v", name, ents)
		}
	}
	dir := t.TempDir()
	path, err := WriteFiles(dir, "xray-log.ok.", ok, ok)
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 2 || !strings.HasSuffix(path, names[0]) || names[1] != names[0]+traceset.MapSuffix {
		t.Errorf("a flush left %v, want %s and its map", names, path)
	}
}
