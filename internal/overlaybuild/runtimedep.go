package overlaybuild

import (
	"fmt"
	"strings"

	"github.com/goxray/xray/internal/instrument"
)

// What goxray's runtime imports. Instrumented code imports the runtime
// (xrayauto), so a package the runtime imports itself (golang.org/x/sys/unix
// in a build whose main module is golang.org/x/sys, or which -xray.pkgs
// extends to it) cannot be instrumented: its instrumented copy would
// import itself, and the go command would stop on an import cycle. Such a
// package is left alone, like the standard library, and one named on the
// command line is refused, saying why (withoutRuntimeImports).

// runtimeImports returns the import paths of the packages goxray's runtime
// imports, directly or not, as this build resolves them (its main module
// wins over the runtime's requirement of the same module).
func (d *driver) runtimeImports(listFlags []string) map[string]bool {
	deps, err := goJSON[struct{ ImportPath string }](d, append(append([]string{"list", "-e", "-deps", "-json=ImportPath"}, listFlags...), instrument.ImportPath)...)
	if err != nil {
		// Not knowing is not a reason to refuse the build: the go
		// command will still say if there is a cycle.
		return nil
	}
	out := map[string]bool{}
	for _, p := range deps {
		out[p.ImportPath] = true
	}
	return out
}

// withoutRuntimeImports drops from list the packages to instrument that
// rt names (their test variants too), and refuses a build that names one
// on the command line.
func withoutRuntimeImports(list []listPackage, rt map[string]bool, extra map[string]bool) ([]listPackage, error) {
	if len(rt) == 0 {
		return list, nil
	}
	var out []listPackage
	for _, p := range list {
		path, _, _ := strings.Cut(p.ImportPath, " ")
		if !rt[path] || !selected(p, extra) {
			out = append(out, p)
			continue
		}
		if !p.DepOnly && p.ForTest == "" {
			return nil, fmt.Errorf("%s is imported by goxray's runtime (%s), which instrumented code imports: an instrumented copy of it would import itself, so goxray does not instrument it, and this build would trace nothing of it", path, instrument.ImportPath)
		}
	}
	return out, nil
}
