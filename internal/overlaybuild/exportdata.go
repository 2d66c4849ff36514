package overlaybuild

import (
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"strings"
	"sync"
)

// exportImporter loads the packages that instrumenting one needs types
// from (see internal/instrument's rangefunc.go) out of the compiler's
// export data, which one `go list -export` of the build's packages and
// their dependencies provides. Type-checking imports from source instead
// takes seconds per package, tens of them for net/http's imports. The list
// runs the first time a package needs it, so builds that never need types
// never pay for it; it compiles the user's packages as written, which a
// later plain build then finds in the cache.
type exportImporter struct {
	d    *driver
	args []string // go list's flags and package patterns

	once  sync.Once
	files map[string]string // import path → export data file
	err   error
	imp   types.Importer
}

func newExportImporter(d *driver, listFlags, pkgs []string) *exportImporter {
	return &exportImporter{d: d, args: d.listDeps(listFlags, pkgs, "-export", "-json=ImportPath,Export")}
}

func (e *exportImporter) Import(path string) (*types.Package, error) {
	e.once.Do(func() {
		var list []struct{ ImportPath, Export string }
		list, e.err = goJSON[struct{ ImportPath, Export string }](e.d, e.args...)
		e.files = map[string]string{}
		for _, p := range list {
			path, variant, _ := strings.Cut(p.ImportPath, " ")
			// A package's test variant exports what its test files add,
			// which the external test package may use: prefer it.
			if p.Export != "" && (e.files[path] == "" || variant != "") {
				e.files[path] = p.Export
			}
		}
		e.imp = importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
			f, ok := e.files[path]
			if !ok {
				return nil, fmt.Errorf("no export data for %s", path)
			}
			return os.Open(f)
		})
	})
	if e.err != nil {
		return nil, e.err
	}
	return e.imp.Import(path)
}
