package xrayotel

import (
	"os/exec"
	"strings"
	"testing"
)

// xrayotel is a module of its own, versioned apart from goxray's engine:
// it builds on package xray's supported API (and fdr's), never on the
// engine's packages under github.com/goxray/xray/internal, which promise
// nothing. Its tests may run llvm-xray through internal/xraytool, a test
// helper, not the engine.
func TestImportsNoEngine(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the imports: %v", err)
	}
	const f = `{{.ImportPath}}|{{join .Imports " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}`
	out, err := exec.Command(goTool, "list", "-f", f, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const engine = "github.com/goxray/xray/internal/"
	pkgs := 0
	for line := range strings.Lines(string(out)) {
		parts := strings.Split(strings.TrimSpace(line), "|")
		if len(parts) != 3 {
			t.Fatalf("go list printed %q", line)
		}
		pkgs++
		for _, imp := range strings.Fields(parts[1]) {
			if strings.HasPrefix(imp, engine) {
				t.Errorf("%s imports %s", parts[0], imp)
			}
		}
		for _, imp := range strings.Fields(parts[2]) {
			if strings.HasPrefix(imp, engine) && imp != engine+"xraytool" {
				t.Errorf("%s's tests import %s", parts[0], imp)
			}
		}
	}
	if pkgs < 2 {
		t.Fatalf("go list found %d packages:\n%s", pkgs, out)
	}
}
