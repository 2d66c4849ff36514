package instrument

import (
	"fmt"
	"go/ast"
	"hash/fnv"
	"strconv"
	"strings"
)

// declName is the linker's name of a declared function or method.
func (s *fileState) declName(d *ast.FuncDecl) string {
	if d.Recv == nil {
		if d.Name.Name == "init" {
			n := s.inits
			s.inits++
			return s.prefix + ".init." + strconv.Itoa(n)
		}
		return s.prefix + "." + d.Name.Name + typeArgs(d)
	}
	t := ast.Unparen(d.Recv.List[0].Type) // (*T) and *(T) are receivers too
	ptr := false
	if st, ok := t.(*ast.StarExpr); ok {
		ptr, t = true, ast.Unparen(st.X)
	}
	typ := ""
	switch t := t.(type) {
	case *ast.Ident:
		typ = t.Name
		for i := 0; i < len(s.aliases) && s.aliases[typ] != ""; i++ {
			typ = s.aliases[typ]
		}
	case *ast.IndexExpr:
		typ = exprIdent(t.X) + "[...]"
	case *ast.IndexListExpr:
		typ = exprIdent(t.X) + "[...]"
	}
	if ptr {
		return s.prefix + ".(*" + typ + ")." + d.Name.Name + typeArgs(d)
	}
	return s.prefix + "." + typ + "." + d.Name.Name + typeArgs(d)
}

// typeArgs is "[...]" for a function with type parameters of its own (a
// generic function or, from Go 1.27, a generic method), whose
// instantiations the runtime names all alike: path.F[...],
// path.(*T).M[...], path.(*T[...]).M[...].
func typeArgs(d *ast.FuncDecl) string {
	if d.Type.TypeParams != nil && len(d.Type.TypeParams.List) > 0 {
		return "[...]"
	}
	return ""
}

func exprIdent(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return "?"
}

// symbolPrefix is the linker's prefix for a package's symbols: the import
// path with control bytes, '%', '"' and, in the last element, '.'
// escaped as %xx; "main" for commands.
func symbolPrefix(importPath, pkgName string) string {
	if pkgName == "main" {
		return "main"
	}
	last := strings.LastIndexByte(importPath, '/')
	var b strings.Builder
	for i := 0; i < len(importPath); i++ {
		c := importPath[i]
		if c <= ' ' || c == '%' || c == '"' || c >= 0x7f || (c == '.' && i > last) {
			fmt.Fprintf(&b, "%%%02x", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// identSafe turns a file name into a unique identifier suffix.
func identSafe(base string) string {
	h := fnv.New32a()
	h.Write([]byte(base))
	var b strings.Builder
	for _, r := range strings.TrimSuffix(base, ".go") {
		if r < 0x80 && (r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return fmt.Sprintf("%s_%08x", b.String(), h.Sum32())
}
