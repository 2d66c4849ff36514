package instrument

import (
	"fmt"
	"go/ast"
	"go/token"
	"strings"
)

// declareTables declares the files' id tables and the package's
// registrations, and returns a file to add to the package, nil when none
// is needed (see addedRegistration). The id arrays and their gates are
// declared in the first file of the package (and of its test files),
// right after its imports (and the import of xrayauto goes in
// afterwards, so that the host has it even without functions of its
// own): being ready at once, they are the first variables initialized,
// before any initializer that reaches an instrumented function in a way
// initialization order does not see (an interface or func value call).
// The test files' go to the first test file: the package's first file is
// compiled without them too.
func (p *pkgState) declareTables(importPath string, afs []*ast.File, files []File, states []*fileState) *Result {
	var added *Result
	for _, test := range []bool{false, true} {
		host := -1
		var tables []*fileState
		for i, s := range states {
			if s.isTest != test {
				continue
			}
			if host == -1 && !s.cgo {
				host = i // cgo files are left alone
			}
			if len(s.funcs) > 0 {
				tables = append(tables, s)
			}
		}
		reg := untracedRegistration(importPath, states, test)
		disp := p.dispatch.registration(importPath, test)
		if host == -1 && reg != "" {
			added = addedRegistration(afs, files, states, reg)
		}
		if len(tables) > 0 || (reg != "" || disp != "") && host != -1 {
			h, af := states[host], afs[host]
			// Each table's gates before it: the table's initializer
			// refers to them, and a variable is initialized only after
			// those it refers to, in declaration order. Declared
			// later, they would let every variable declared before them
			// be initialized first.
			var decls []string
			for _, t := range tables {
				decls = append(decls, fmt.Sprintf("var %s [%d]%s.Gate; var %s [%d]%s.Code; var %s = %s_init()", t.gates(), len(t.funcs), h.xr, t.codes(), len(t.funcs), h.xr, t.ids, t.ids))
			}
			for _, r := range []string{reg, disp} {
				if r != "" {
					decls = append(decls, "var _ = "+h.xr+"."+r)
				}
			}
			at := af.Name.End()
			for _, d := range af.Decls {
				if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
					at = g.End()
				}
			}
			h.insert(h.tf.Offset(at), "; "+strings.Join(decls, "; "))
		}
	}
	return added
}
