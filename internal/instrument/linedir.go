package instrument

import (
	"go/ast"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// A file's own line directives (generated code: //line gen.y:100) decide
// what the runtime reports for the code after them, and the rewrite must
// leave that as it was. Two facts shape this:
//   - A directive may omit the column; the code after it then has column
//     0, which a directive cannot name ("/*line :101:0*/" is refused), and
//     an empty file name ("/*line :101*/") means "??". The rewrite's own
//     directives then carry the file name and no column.
//   - A relative file name is reported as written by Go 1.26's compiler,
//     and resolved against the directory of the file being compiled from
//     Go 1.27 on: for the rewritten copy, that is the overlay's directory.
//     For a compiler that resolves, relative names are made absolute
//     against the original file's directory, which is what it reports for
//     the plain build.

// lineDirective is one of the file's line directives that names a file.
type lineDirective struct {
	end  int    // offset just past the directive: where it takes effect
	name string // the file name the compiler reports after it
}

// scanLineDirectives records the file's line directives that name a file,
// and rewrites their relative names to absolute ones when the compiler
// resolves relative names.
func (s *fileState) scanLineDirectives(af *ast.File, path string) {
	for _, g := range af.Comments {
		for _, c := range g.List {
			name, from, ok := directiveName(c.Text)
			if !ok {
				continue
			}
			off := s.tf.Offset(c.Pos())
			if !filepath.IsAbs(name) && s.cfg.resolvesRelativeLines() {
				abs := filepath.Join(filepath.Dir(path), name)
				s.edits = append(s.edits, edit{off: off + from, del: len(name), text: abs, seq: len(s.edits)})
				name = abs
			}
			s.lineDirs = append(s.lineDirs, lineDirective{end: s.tf.Offset(c.End()), name: name})
		}
	}
	sort.Slice(s.lineDirs, func(i, j int) bool { return s.lineDirs[i].end < s.lineDirs[j].end })
}

// directiveName returns the file name of a line directive comment and its
// offset in the text; ok is false for other comments and for directives
// without a file name (":line", ":line:col").
func directiveName(text string) (name string, at int, ok bool) {
	var body string
	switch {
	case strings.HasPrefix(text, "//line "):
		body = text[len("//line "):]
	case strings.HasPrefix(text, "/*line ") && strings.HasSuffix(text, "*/"):
		body = text[len("/*line ") : len(text)-2]
	default:
		return "", 0, false
	}
	// "name:line" or "name:line:col": up to two numbers, at least one.
	name = body
	for n := 0; n < 2; n++ {
		i := strings.LastIndexByte(name, ':')
		if i < 0 {
			break
		}
		if _, err := strconv.ParseUint(name[i+1:], 10, 32); err != nil {
			break
		}
		name = name[:i]
	}
	if name == body || name == "" {
		return "", 0, false
	}
	return name, len("//line "), true
}

// reportedName is the file name the compiler gives the code at off when a
// directive of the file's own named it, "" otherwise.
func (s *fileState) reportedName(off int) string {
	i := sort.Search(len(s.lineDirs), func(i int) bool { return s.lineDirs[i].end > off })
	if i == 0 {
		return ""
	}
	return s.lineDirs[i-1].name
}

// lineBack is the directive that gives the code at off its original
// position back after inserted text. explicit names the file even where
// an empty name would do (text moved elsewhere in the file).
func (s *fileState) lineBack(off int, explicit bool) string {
	p := s.tf.Position(s.tf.Pos(off))
	name := s.reportedName(off)
	if name == "" && (explicit || p.Column == 0) && len(s.lineDirs) > 0 {
		name = s.origName
	}
	if p.Column == 0 {
		return "/*line " + name + ":" + strconv.Itoa(p.Line) + "*/"
	}
	if explicit && len(s.lineDirs) > 0 {
		return "/*line " + name + ":" + strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Column) + "*/"
	}
	return "/*line :" + strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Column) + "*/"
}

// resolvesRelativeLines reports whether the compiler resolves relative
// file names of line directives against the compiled file's directory
// (Go 1.27 and later).
func (c Config) resolvesRelativeLines() bool {
	return c.goMinor() >= 27
}

// goMinor is the minor release of GoVersion (27 for "go1.27.3"), 0 when
// it does not say.
func (c Config) goMinor() int {
	v, ok := strings.CutPrefix(c.GoVersion, "go1.")
	if !ok {
		return 0
	}
	n := 0
	for _, r := range v {
		if r < '0' || r > '9' {
			break
		}
		n = n*10 + int(r-'0')
	}
	return n
}
