package instrument

import (
	"bytes"
	"fmt"
	"go/ast"
	"sort"
	"strconv"
	"strings"
)

type edit struct {
	off  int
	del  int // bytes of the original replaced by text (build lines only)
	text string
	seq  int // keeps insertions at one offset in the order they were made
}

// pinLang gives the file the language version Config.Lang through its
// build constraint, which the compiler and vet honour per file: the
// //go:build line becomes "//go:build (expr) && goX.Y" on the same line
// (a file that asks for a newer version keeps it), "// +build" lines,
// which would no longer match it, become plain comments, and a file
// without constraint gets one above everything, followed by a //line
// directive that gives its first line back its number.
func (s *fileState) pinLang(af *ast.File, name string) {
	found := false
	for _, g := range af.Comments {
		if g.Pos() >= af.Package {
			break
		}
		for _, c := range g.List {
			off := s.tf.Offset(c.Pos())
			switch {
			case strings.HasPrefix(c.Text, "//go:build ") && !found:
				found = true
				expr := strings.TrimSpace(strings.TrimPrefix(c.Text, "//go:build "))
				s.edits = append(s.edits, edit{off: off, del: len(c.Text), text: "//go:build (" + expr + ") && " + s.cfg.Lang, seq: len(s.edits)})
			case strings.HasPrefix(c.Text, "// +build "):
				s.edits = append(s.edits, edit{off: off + 3, del: 1, text: " ", seq: len(s.edits)})
			}
		}
	}
	if !found {
		s.edits = append(s.edits, edit{off: 0, text: "//go:build " + s.cfg.Lang + "\n//line " + name + ":1:1\n", seq: -1})
	}
}

// insert records text to insert at off, followed by a line directive
// that gives what follows its original position back.
func (s *fileState) insert(off int, text string) {
	text += s.lineBack(off, false)
	s.edits = append(s.edits, edit{off: off, text: text, seq: len(s.edits)})
}

// insertFirst is insert, ahead of every other insertion at off.
func (s *fileState) insertFirst(off int, text string) {
	text += s.lineBack(off, false)
	s.edits = append(s.edits, edit{off: off, text: text, seq: -1})
}

func (s *fileState) apply(name string) []byte {
	sort.SliceStable(s.edits, func(i, j int) bool {
		if s.edits[i].off != s.edits[j].off {
			return s.edits[i].off < s.edits[j].off
		}
		return s.edits[i].seq < s.edits[j].seq
	})
	var b bytes.Buffer
	last := 0
	for _, e := range s.edits {
		b.Write(s.src[last:e.off])
		b.WriteString(e.text)
		last = e.off + e.del
	}
	b.Write(s.src[last:])
	if len(s.funcs) == 0 {
		return b.Bytes()
	}
	for _, sib := range s.siblings {
		b.WriteString("\n\n")
		b.WriteString(sib)
	}
	// The table: an array (declared in the package's first file, see
	// Package) whose initializer is a declared function, not a literal,
	// so it takes no number from the package's literals.
	var tab strings.Builder
	for _, f := range s.funcs {
		if f.File != "" {
			fmt.Fprintf(&tab, "%s\t%d\t%s\n", f.Name, f.Line, f.File)
		} else {
			fmt.Fprintf(&tab, "%s\t%d\n", f.Name, f.Line)
		}
	}
	if !bytes.HasSuffix(b.Bytes(), []byte("\n")) {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\nfunc %s_init() (ids [%d]%s.ID) {\n\t%s.RegisterTable(ids[:], %s[:], %s, %s)\n\t%s.RegisterCode(ids[:], %s[:])\n\treturn\n}\n",
		s.ids, len(s.funcs), s.xr, s.xr, s.gates(), strconv.Quote(name), strconv.Quote(tab.String()), s.xr, s.codes())
	b.WriteString(s.codeDecl())
	return b.Bytes()
}
