package instrument

import (
	"go/parser"
	"go/token"
	"regexp"
	"strings"
	"testing"
)

// TestCodeWordsFilled: the generated code fills each function's code
// words (code.go) from what has one: func values and method expressions
// of declared functions and of their traced copies, literals where they
// are made, wherever that is (a package-level initializer, the first
// thing in a body whose gate goes there too, the argument of an os.Exit
// the exit hooks wrap), init functions by their first statement; never
// a generic function's.
func TestCodeWordsFilled(t *testing.T) {
	src := `package main

import "os"

type T struct{}

type A = T

func (t *T) M() int { return 1 }

func (A) V() int { return 2 }

func (_ *T) Cond() { defer func() { recover() }() }

type Box[E any] struct{ e E }

func (b *Box[E]) Get() E { return b.e }

func G[E any](e E) E { return e }

func F() int { return 3 }

func init() { _ = F() }

var h = func() int { return 4 }

func Tight() {func() { _ = 1 }()}

func main() { os.Exit(func() int { return 0 }()) }
`
	rs, err := Package("example.com/cmd", []File{{Path: "m.go", Src: []byte(src)}}, Config{ExitHooks: true})
	if err != nil {
		t.Fatal(err)
	}
	out := string(rs[0].Src)
	if _, err := parser.ParseFile(token.NewFileSet(), "m.go", out, 0); err != nil {
		t.Fatalf("the rewrite does not parse: %v\n%s", err, out)
	}
	// The words' initializer lists, per table entry, the function and its
	// copy.
	byName := map[string][2]string{}
	m := regexp.MustCompile(`var _ = __xray\.Codes\(\w+_code\[:\], (.*)\)\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no Codes initializer:\n%s", out)
	}
	vals := strings.Split(m[1], ", ")
	if len(vals) != 2*len(rs[0].Funcs) {
		t.Fatalf("%d values for %d functions: %s", len(vals), len(rs[0].Funcs), m[1])
	}
	for i, f := range rs[0].Funcs {
		byName[f.Name] = [2]string{vals[2*i], vals[2*i+1]}
	}
	for name, want := range map[string][2]string{
		"main.(*T).M":          {"(*T).M", "(*T).__xray_M"},
		"main.T.V":             {"A.V", "A.__xray_V"},
		"main.(*T).Cond":       {"(*T).Cond", "nil"}, // conditional shape: no copy
		"main.(*Box[...]).Get": {"nil", "nil"},
		"main.G[...]":          {"nil", "nil"},
		"main.F":               {"F", "__xray_F"},
		"main.init.0":          {"nil", "nil"},
		"main.init.func1":      {"nil", "nil"},
		"main.Tight":           {"Tight", "nil"},
		"main.Tight.func1":     {"nil", "nil"},
		"main.main":            {"main", "nil"},
		"main.main.func1":      {"nil", "nil"},
	} {
		if got, ok := byName[name]; !ok || got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	out = codeRef.ReplaceAllString(gateRef.ReplaceAllString(out, "GATE.On()"), "&CODE")
	for _, want := range []string{
		`func init() {__xray.Here(&CODE); __xray.Enter(`,
		`var h = __xray.Lit(&CODE, /*line :25:9*/func() int {`,
		`func Tight() {if GATE.On() { __xray.Enter(__xray_ids_m_`,
		`/*line :27:15*/__xray.Lit(&CODE, /*line :27:15*/func() {`,
		`os.Exit(__xray.AutoExit(/*line :29:23*/__xray.Lit(&CODE, /*line :29:23*/func() int {`,
		`return 0 })/*line :29:46*/())/*line :29:48*/)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in:\n%s", want, out)
		}
	}
}
