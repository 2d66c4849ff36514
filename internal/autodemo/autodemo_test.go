package autodemo

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDerive: the derived demo is cmd/xraydemo's main.go with lines
// deleted, each of them goxray's, and nothing of goxray left.
func TestDerive(t *testing.T) {
	const dir = "../../internal/cmd/xraydemo"
	files, err := Derive(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := files[tracingFile]; ok || len(files) == 0 {
		t.Fatalf("derived files: %v", keys(files))
	}
	for name, got := range files {
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		body := strings.TrimPrefix(string(got), doc)
		if strings.Contains(body, "xray") {
			t.Errorf("%s still names goxray:\n%s", name, body)
		}
		// Every kept line is the source's, in order; every deleted one
		// names xray or the tracing functions and ids.
		kept := strings.Split(body, "\n")
		for _, l := range strings.Split(string(src), "\n") {
			if len(kept) > 0 && kept[0] == l {
				kept = kept[1:]
				continue
			}
			if s := strings.TrimSpace(l); s != "" && !strings.Contains(s, "xray") && !strings.Contains(s, "Tracing()") {
				t.Errorf("%s: deleted a line that is not goxray's: %q", name, l)
			}
		}
		if len(kept) > 0 && !(len(kept) == 1 && kept[0] == "") {
			t.Errorf("%s: lines not in the source: %q", name, kept)
		}
	}
	if !bytes.HasPrefix(files["main.go"], []byte(doc)) {
		t.Error("main.go lacks the derived package comment")
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
