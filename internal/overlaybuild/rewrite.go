package overlaybuild

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/instrument"
)

// instrument rewrites every unit's files (read from the user's overlay
// replacement when there is one) into the overlay store and returns the
// overlay: original path → rewritten copy. With trim, the instrumentation
// map names files module-relative, as -trimpath does.
func (d *driver) instrument(units []*unit, cfg instrument.Config, userOv map[string]string, trim bool) (map[string]string, error) {
	overlay := map[string]string{}
	total, files, leaves, untraced := 0, 0, 0, 0
	for _, u := range units {
		in := make([]instrument.File, 0, len(u.files))
		for _, f := range u.files {
			from := f
			if r := userOv[f]; r != "" {
				from = r
			}
			src, err := os.ReadFile(from)
			if err != nil {
				return nil, err
			}
			name := f
			if trim && u.mod != nil {
				if rel, err := filepath.Rel(u.mod.Dir, f); err == nil {
					name = u.mod.Path + "/" + filepath.ToSlash(rel)
				}
			}
			in = append(in, instrument.File{Path: f, Name: name, Src: src})
		}
		ucfg := cfg
		ucfg.Library = u.library
		ucfg.Unseen = u.unseen
		if u.mod != nil && u.mod.Main {
			ucfg.Lang = d.langPin
		}
		rs, err := instrument.Package(u.importPath, in, ucfg)
		if err != nil {
			return nil, err
		}
		if len(rs) > 0 && rs[0].UntypedRanges > 0 {
			fmt.Fprintf(os.Stderr, "goxray: %s: %d range loops over values whose type could not be loaded; function literals in their bodies may be named in the trace as Go 1.26 names them, not as this Go release does\n", u.importPath, rs[0].UntypedRanges)
		}
		for _, r := range rs {
			leaves += len(r.Leaves)
			untraced += len(r.Untraced)
			if d.opts.verbose {
				if why := fileWhy[r.Whole]; why != "" {
					fmt.Fprintf(os.Stderr, "goxray: %s: not instrumented, %s\n", r.Path, why)
				}
				for _, f := range r.Untraced {
					note := ""
					if f.Unnamed {
						note = " (cgo may number it otherwise: the trace counts it without a name)"
					}
					fmt.Fprintf(os.Stderr, "goxray: %s:%d %s (size %d): not traced, %s%s\n", r.Path, f.Line, f.Name, f.Size, untracedWhy[cmp.Or(f.Mark, f.Reason)], note)
				}
			}
			if r.Src == nil {
				continue
			}
			p, err := storeOverlay(r.Path, r.Src)
			if err != nil {
				return nil, err
			}
			overlay[r.Path] = p
			files++
			total += len(r.Funcs)
			if d.opts.verbose {
				dispatched := map[string]bool{}
				for _, f := range r.Dispatched {
					dispatched[f.Name] = true
				}
				for _, f := range r.Funcs {
					note := ""
					if dispatched[f.Name] {
						note = ": no gate of its own, traced where its callers' traced copies call it"
					}
					fmt.Fprintf(os.Stderr, "goxray: %s:%d %s (size %d)%s\n", r.Path, f.Line, f.Name, f.Size, note)
				}
			}
		}
		if d.verb == "test" && cfg.ExitHooks && u.needsTestMain {
			name := filepath.Join(u.dir, "zz_goxray_testmain_test.go")
			p, err := storeOverlay(name, fmt.Appendf(nil, testMainSrc, u.testMainPackage()))
			if err != nil {
				return nil, err
			}
			overlay[name] = p
		}
	}
	if d.opts.verbose {
		fmt.Fprintf(os.Stderr, "goxray: %d functions instrumented in %d files; %d functions not traced in all; %d call-free leaves not traced\n", total, files, untraced, leaves)
	}
	return overlay, nil
}

// fileWhy says why -xray.v lists a whole file as not instrumented, by
// instrument's Result.Whole. A generated or cgo file's functions are
// listed after it as not traced, and are in the trace's untraced set; a
// file that imports goxray is instrumented by hand, so its functions are
// in neither.
var fileWhy = map[string]string{
	fdr.UntracedGenerated: "generated code (-xray.generated instruments it)",
	fdr.UntracedCgo:       "it uses cgo",
	instrument.ByHand:     "it imports github.com/goxray/xray (instrumented by hand)",
}

// untracedWhy says why -xray.v lists a function as not traced: the mark
// or file kind that kept it out, else the selection's reason and the
// flag that traces it.
var untracedWhy = map[string]string{
	fdr.UntracedSmall:     "below -xray.threshold",
	fdr.UntracedInlinable: "the compiler would inline it (-xray.threshold=0 traces it)",
	fdr.UntracedLeaf:      "a call-free leaf (-xray.leaves traces it)",
	fdr.UntracedNever:     "marked //xray:never",
	fdr.UntracedDirective: "it carries a //go: directive (nosplit, linkname, …)",
	fdr.UntracedGenerated: "in generated code (-xray.generated instruments it)",
	fdr.UntracedCgo:       "in a file that uses cgo",
}
