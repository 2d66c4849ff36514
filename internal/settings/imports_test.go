package settings

import (
	"go/build"
	"strings"
	"testing"
)

// TestImportsStayLow: the schema imports nothing above it (the engine,
// the parsers that read it), and the engine reads its configuration from
// here, not from the environment parser above it.
func TestImportsStayLow(t *testing.T) {
	const mod = "github.com/goxray/xray/"
	allowed := map[string]bool{mod + "internal/buffer": true, mod + "internal/logline": true, mod + "internal/tmpfile": true, mod + "internal/traceset": true}
	p, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range p.Imports {
		if strings.HasPrefix(imp, mod) && !allowed[imp] {
			t.Errorf("settings imports %s", imp)
		}
	}
	e, err := build.ImportDir("../engine", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range e.Imports {
		if imp == mod+"internal/xrayflags" {
			t.Errorf("the engine imports %s, which sits above it", imp)
		}
	}
}
