package instrmap

import (
	"bytes"
	"testing"
)

// TestReadWhatWriteWrote reads a map Write made with the package's own
// reader: every id gets its name (placeholders in the gap), its file and
// line, and account's location column.
func TestReadWhatWriteWrote(t *testing.T) {
	funcs := []Func{
		{ID: 1, Name: "main.main", File: "/src/main.go", Line: 12},
		{ID: 2, Name: "main.(*T).M", File: "/src/t.go", Line: 40},
		{ID: 4, Name: "example.com/p.F"},
	}
	var b bytes.Buffer
	if _, err := Write(&b, funcs); err != nil {
		t.Fatal(err)
	}
	m, err := ParseMap(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id         uint32
		name, file string
		line       int
		loc        string
	}{
		{1, "main.main", "/src/main.go", 12, "main.go:12:0"},
		{2, "main.(*T).M", "/src/t.go", 40, "t.go:40:0"},
		{3, "#3", "", 0, "<invalid>:0:0"},
		{4, "example.com/p.F", "", 0, "<invalid>:0:0"},
		{5, "#5", "", 0, "(unknown)"},
	} {
		file, line := m.Source(c.id)
		if got := m.Name(c.id); got != c.name || file != c.file || line != c.line || m.Location(c.id) != c.loc {
			t.Errorf("id %d: name %q, source %s:%d, location %q; want %q, %s:%d, %q", c.id, got, file, line, m.Location(c.id), c.name, c.file, c.line, c.loc)
		}
	}
	if _, err := ParseMap(bytes.NewReader(b.Bytes()[:100])); err == nil {
		t.Error("a cut map parsed")
	}
}
