package instrument

import (
	"fmt"
	"go/parser"
	"go/token"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/goxray/xray/fdr"
)

// registration returns the set the RegisterUntracedSet call in src
// registers, and false when there is none.
func registration(t *testing.T, src []byte) (fdr.Untraced, bool) {
	t.Helper()
	s := string(src)
	const call = ".RegisterUntracedSet("
	i := strings.Index(s, call)
	if i < 0 {
		return fdr.Untraced{}, false
	}
	if strings.Count(s, call) != 1 {
		t.Fatalf("two registrations:\n%s", s)
	}
	args := s[i+len(call):]
	end := strings.Index(args, ")/*line") // in a rewritten file
	if end < 0 {
		end = strings.Index(args, ")\n") // in an added one
	}
	args = args[:end]
	pkg, set, ok := strings.Cut(args, ", ")
	if !ok {
		t.Fatalf("registration %s", args)
	}
	pkg, err := strconv.Unquote(pkg)
	if err != nil || pkg != "example.com/q" && pkg != "q" {
		t.Fatalf("registration of package %s", args)
	}
	set, err = strconv.Unquote(set)
	if err != nil {
		t.Fatalf("registration %s: %v", args, err)
	}
	u, ok := fdr.ParseUntraced([]byte(fdr.UntracedPrefix + " " + set))
	if !ok {
		t.Fatalf("registered set %q does not parse", set)
	}
	return u, true
}

// reasons counts a file's untraced functions by the reason the trace
// gives, and marks by the mark that kept them out.
func reasons(r Result) map[string]int {
	n := map[string]int{}
	for _, u := range r.Untraced {
		n[u.Reason]++
	}
	return n
}

func marks(r Result) map[string]int {
	n := map[string]int{}
	for _, u := range r.Untraced {
		if u.Mark != "" {
			n[u.Mark]++
		}
	}
	return n
}

// TestUntracedRegistered: the package's first file registers what the
// selection left out, by reason, with the names (leaves first) bounded by
// MaxUntracedNames; the test files register theirs in the first test
// file; a package with nothing instrumented registers too, and the files
// still parse.
func TestUntracedRegistered(t *testing.T) {
	big := strings.Repeat("\tfmt.Println(len(xs) * 3 + len(xs) * 5 - len(xs))\n", 12)
	var small strings.Builder
	for i := range MaxUntracedNames + 5 {
		fmt.Fprintf(&small, "func s%d() int { return %d }\n\n", i, i)
	}
	a := "package q\n\nimport \"fmt\"\n\nfunc Big(xs []int) {\n" + big + "}\n\n" +
		"func Leaf(a, b int) int {\n" + flatBody(14) + "\treturn a\n}\n"
	b := "package q\n\n" + small.String()
	test := "package q\n\nfunc helper() int { return 1 }\n"
	rs, err := Package("example.com/q", []File{{Path: "a.go", Src: []byte(a)}, {Path: "b.go", Src: []byte(b)}, {Path: "q_test.go", Src: []byte(test)}},
		Config{Threshold: DefaultThreshold, SkipInlinable: true, SkipLeaves: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(rs); !reflect.DeepEqual(got, []string{"example.com/q.Big"}) {
		t.Fatalf("instrumented %q", got)
	}
	u, _ := registration(t, rs[0].Src)
	if u.Counts[fdr.UntracedSmall] != MaxUntracedNames+5 || u.Counts[fdr.UntracedInlinable] != 0 || u.Counts[fdr.UntracedLeaf] != 1 || u.Total() != MaxUntracedNames+6 {
		t.Fatalf("registration %+v", u)
	}
	if len(u.Funcs) != MaxUntracedNames || u.Funcs[0] != (fdr.UntracedFunc{Reason: fdr.UntracedLeaf, Name: "example.com/q.Leaf"}) || u.Funcs[1] != (fdr.UntracedFunc{Reason: fdr.UntracedSmall, Name: "example.com/q.s0"}) {
		t.Errorf("names %q", u.Funcs)
	}
	if _, ok := registration(t, rs[1].Src); ok {
		t.Error("the second file registers too")
	}
	if got, _ := registration(t, rs[2].Src); got.Counts[fdr.UntracedSmall] != 1 || got.Total() != 1 || len(got.Funcs) != 1 || got.Funcs[0].Name != "example.com/q.helper" {
		t.Errorf("test files' registration %+v", got)
	}
	if len(rs[0].Untraced) != 1 || rs[0].Untraced[0].Reason != fdr.UntracedLeaf || len(rs[1].Untraced) != MaxUntracedNames+5 {
		t.Errorf("Result.Untraced: %d, %d", len(rs[0].Untraced), len(rs[1].Untraced))
	}

	// Nothing instrumented: the first file still registers, and imports
	// xrayauto for it.
	rs, err = Package("example.com/q", []File{{Path: "b.go", Src: []byte(b)}}, Config{Threshold: DefaultThreshold})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := registration(t, rs[0].Src); got.Counts[fdr.UntracedSmall] != MaxUntracedNames+5 {
		t.Errorf("registration without tables %+v", got)
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "b.go", rs[0].Src, 0); err != nil {
		t.Errorf("rewrite does not parse: %v\n%s", err, rs[0].Src)
	}
	// Everything traced: nothing to register.
	rs, err = Package("example.com/q", []File{{Path: "b.go", Src: []byte(b)}}, Config{Threshold: 0})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := registration(t, rs[0].Src); ok {
		t.Errorf("registration with everything traced: %+v", got)
	}
}

// TestUntracedExcluded: functions that a mark (//xray:never, a //go:
// directive) or their file's kind (generated, cgo) keep out are in the
// registered set under that reason, the literals of a never function
// too, unless the selection would have left them out anyway (then under
// its reason); a file that imports goxray adds nothing, and the names of
// what only the exclusion keeps out come first.
func TestUntracedExcluded(t *testing.T) {
	big := "{\n" + strings.Repeat("\tfmt.Println(len(xs) * 3 + len(xs) * 5 - len(xs))\n", 12) + "}\n\n"
	a := "package q\n\nimport \"fmt\"\n\n" +
		"func Traced(xs []int) " + big +
		"//xray:never\nfunc Never(xs []int) {\n\tf := func() " + big + "\tf()\n" + big[2:] +
		"//go:nosplit\nfunc Split(xs []int) " + big +
		"//xray:never\nfunc tiny() int { return 1 }\n"
	gen := "// Code generated by hand. DO NOT EDIT.\n\npackage q\n\nimport \"fmt\"\n\nfunc Gen(xs []int) " + big + "func get() int { return 2 }\n"
	cgo := "package q\n\n// int two(void) { return 2; }\nimport \"C\"\nimport \"fmt\"\n\nfunc WithC(xs []int) " + big
	hand := "package q\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/goxray/xray\"\n)\n\nfunc Hand(xs []int) " + big + "var _ = xray.Enter\n"
	rs, err := Package("example.com/q", []File{
		{Path: "a.go", Src: []byte(a)}, {Path: "gen.go", Src: []byte(gen)},
		{Path: "c.go", Src: []byte(cgo)}, {Path: "hand.go", Src: []byte(hand)},
	}, Config{Threshold: DefaultThreshold, SkipInlinable: true, SkipLeaves: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(rs); !reflect.DeepEqual(got, []string{"example.com/q.Traced"}) {
		t.Fatalf("instrumented %q", got)
	}
	u, ok := registration(t, rs[0].Src)
	if !ok {
		t.Fatalf("no registration in\n%s", rs[0].Src)
	}
	want := fdr.Untraced{Counts: map[string]int{fdr.UntracedSmall: 2, fdr.UntracedNever: 2, fdr.UntracedDirective: 1, fdr.UntracedGenerated: 1, fdr.UntracedCgo: 1}}
	if got := u; got.Counts[fdr.UntracedSmall] != want.Counts[fdr.UntracedSmall] || got.Counts[fdr.UntracedNever] != want.Counts[fdr.UntracedNever] || got.Counts[fdr.UntracedDirective] != want.Counts[fdr.UntracedDirective] || got.Counts[fdr.UntracedGenerated] != want.Counts[fdr.UntracedGenerated] || got.Counts[fdr.UntracedCgo] != want.Counts[fdr.UntracedCgo] || got.Total() != want.Total() {
		t.Errorf("counts %+v, want %+v", got, want)
	}
	var order []string
	for _, f := range u.Funcs {
		order = append(order, f.Reason+":"+strings.TrimPrefix(f.Name, "example.com/q."))
	}
	wantOrder := []string{"cgo:WithC", "never:Never.func1", "never:Never", "directive:Split", "generated:Gen", "small:tiny", "small:get"}
	if !reflect.DeepEqual(order, wantOrder) {
		t.Errorf("names %q, want %q", order, wantOrder)
	}
	// What -xray.v says: the mark, for what the selection would have
	// left out too (tiny, get).
	for i, want := range []struct {
		whole string
		marks map[string]int
	}{
		{"", map[string]int{fdr.UntracedNever: 3, fdr.UntracedDirective: 1}},
		{fdr.UntracedGenerated, map[string]int{fdr.UntracedGenerated: 2}},
		{fdr.UntracedCgo, map[string]int{fdr.UntracedCgo: 1}},
		{ByHand, map[string]int{}},
	} {
		if rs[i].Whole != want.whole || !reflect.DeepEqual(marks(rs[i]), want.marks) {
			t.Errorf("file %d: whole %q, marks %v; want %q, %v", i, rs[i].Whole, marks(rs[i]), want.whole, want.marks)
		}
	}
	if len(rs[0].Leaves) != 0 || len(rs[1].Leaves) != 0 {
		t.Errorf("marked functions among the leaves: %+v %+v", rs[0].Leaves, rs[1].Leaves)
	}
}

// TestUntracedByHand: a file that imports goxray is instrumented by hand
// whatever else it is (generated, cgo), so none of its functions is in
// the untraced set.
func TestUntracedByHand(t *testing.T) {
	big := "{\n" + strings.Repeat("\tfmt.Println(len(xs) * 3 + len(xs) * 5 - len(xs))\n", 12) + "}\n"
	imports := "import (\n\t\"fmt\"\n\n\t\"github.com/goxray/xray\"\n)\n\n"
	hand := "var _ = xray.Enter\n\nfunc Hand(xs []int) " + big
	for name, src := range map[string]string{
		"generated": "// Code generated by hand. DO NOT EDIT.\n\npackage q\n\n" + imports + hand,
		"cgo first": "package q\n\n// int two(void) { return 2; }\nimport \"C\"\n" + imports + hand,
		"cgo last":  "package q\n\n" + imports + "// int two(void) { return 2; }\nimport \"C\"\n\n" + hand,
	} {
		rs, err := Package("example.com/q", []File{{Path: "a.go", Src: []byte(src)}, {Path: "b.go", Src: []byte("package q\n\nfunc tiny() int { return 1 }\n")}},
			Config{Threshold: DefaultThreshold, SkipInlinable: true, SkipLeaves: true})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if rs[0].Whole != ByHand || len(rs[0].Untraced) != 0 {
			t.Errorf("%s: whole %q, untraced %+v", name, rs[0].Whole, rs[0].Untraced)
		}
	}
}

// TestUntracedAddedFile: a package whose files all use cgo gets one more
// result, a file beside them (named apart from theirs) that registers
// their untraced set; a package with another file registers from it.
func TestUntracedAddedFile(t *testing.T) {
	big := "{\n" + strings.Repeat("\tfmt.Println(len(xs) * 3 + len(xs) * 5 - len(xs))\n", 12) + "}\n"
	cgo := "package q\n\n// int two(void) { return 2; }\nimport \"C\"\nimport \"fmt\"\n\nfunc WithC(xs []int) " + big
	cfg := Config{Threshold: DefaultThreshold, SkipInlinable: true, SkipLeaves: true}
	rs, err := Package("example.com/q", []File{{Path: "/m/q/c.go", Src: []byte(cgo)}, {Path: "/m/q/zz_goxray_untraced.go", Src: []byte(strings.Replace(cgo, "WithC", "Other", 1))}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 || rs[0].Src != nil || rs[1].Src != nil || rs[2].Path != "/m/q/zz_goxray_untraced_1.go" {
		t.Fatalf("%d results, the last %q", len(rs), rs[len(rs)-1].Path)
	}
	if _, err := parser.ParseFile(token.NewFileSet(), rs[2].Path, rs[2].Src, 0); err != nil || !strings.Contains(string(rs[2].Src), "package q\n") {
		t.Errorf("added file: %v\n%s", err, rs[2].Src)
	}
	if u, ok := registration(t, rs[2].Src); !ok || u.Counts[fdr.UntracedCgo] != 2 || len(u.Funcs) != 2 {
		t.Errorf("added file registers %+v", u)
	}
	rs, err = Package("example.com/q", []File{{Path: "/m/q/a.go", Src: []byte("package q\n\nfunc tiny() int { return 1 }\n")}, {Path: "/m/q/c.go", Src: []byte(cgo)}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if u, ok := registration(t, rs[0].Src); len(rs) != 2 || !ok || u.Counts[fdr.UntracedCgo] != 1 || u.Counts[fdr.UntracedSmall] != 1 {
		t.Errorf("%d results; a.go registers %+v", len(rs), u)
	}
}

// TestUntracedLinknamePush: a function with a body that a //go:linkname
// line gives another symbol (a push, read wherever the line is in the
// file) is left out as carrying a directive, and the set names it as the
// linker does, by its target; its literals keep the local name, as the
// compiler names them. A pull (bodiless) adds nothing.
func TestUntracedLinknamePush(t *testing.T) {
	big := "{\n" + strings.Repeat("\tfmt.Println(len(xs) * 3 + len(xs) * 5 - len(xs))\n", 12) + "}\n\n"
	src := "package q\n\nimport (\n\t\"fmt\"\n\t_ \"unsafe\"\n)\n\n" +
		"//go:linkname pushed example.com/elsewhere.pushedName\nfunc pushed(xs []int) {\n\tf := func() " + big + "\tf()\n" + big[2:] +
		"func far(xs []int) " + big +
		"//go:linkname pulled example.com/elsewhere.pulled\nfunc pulled() int\n\n" +
		"func Traced(xs []int) " + big +
		"//go:linkname far example.com/elsewhere.farName\n"
	rs, err := Package("example.com/q", []File{{Path: "a.go", Src: []byte(src)}},
		Config{Threshold: DefaultThreshold, SkipInlinable: true, SkipLeaves: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(rs), []string{"example.com/q.pushed.func1", "example.com/q.Traced"}; !reflect.DeepEqual(got, want) {
		t.Errorf("instrumented %q, want %q", got, want)
	}
	var got []string
	for _, u := range rs[0].Untraced {
		got = append(got, u.Reason+":"+u.Name)
	}
	want := []string{fdr.UntracedDirective + ":example.com/elsewhere.pushedName", fdr.UntracedDirective + ":example.com/elsewhere.farName"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("untraced %q, want %q", got, want)
	}
}

// TestUntracedCgoLiterals: cgo wraps a C call whose arguments it checks
// in a function literal of its own, which the compiler numbers with the
// file's: a literal of a cgo file after a C call with arguments in the
// same declaration may have another number in the binary, so it is
// counted but not named (Untraced.Unnamed); one before any is named.
func TestUntracedCgoLiterals(t *testing.T) {
	body := "{\n" + strings.Repeat("\t\tfmt.Println(x * 3 + x * 5 - x)\n", 12) + "\t}\n"
	src := "package q\n\n// static int first(void *p) { return 0; }\nimport \"C\"\n\nimport (\n\t\"fmt\"\n\t\"unsafe\"\n)\n\n" +
		"func Run(b []byte) {\n\tbefore := func(x int) " + body +
		"\tbefore(int(C.first(unsafe.Pointer(&b[0]))))\n\tafter := func(x int) " + body + "\tafter(1)\n}\n"
	rs, err := Package("example.com/q", []File{{Path: "main.go", Src: []byte("package q\n")}, {Path: "c.go", Src: []byte(src)}},
		Config{Threshold: DefaultThreshold, SkipInlinable: true, SkipLeaves: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range rs[1].Untraced {
		got = append(got, fmt.Sprintf("%s:%s:%v", u.Reason, u.Name, u.Unnamed))
	}
	want := []string{"cgo:example.com/q.Run.func1:false", "cgo:example.com/q.Run.func2:true", "cgo:example.com/q.Run:false"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("untraced %q, want %q", got, want)
	}
	u, ok := registration(t, rs[0].Src)
	if !ok {
		t.Fatalf("no registration in\n%s", rs[0].Src)
	}
	var names []string
	for _, f := range u.Funcs {
		names = append(names, f.Name)
	}
	if u.Counts[fdr.UntracedCgo] != 3 || !reflect.DeepEqual(names, []string{"example.com/q.Run.func1", "example.com/q.Run"}) {
		t.Errorf("registered %d cgo, names %q; want 3, Run.func1 and Run", u.Counts[fdr.UntracedCgo], names)
	}
}

// TestLinknameAcrossFiles: the compiler reads a //go:linkname line in any
// file of the package and apart from the declaration after it: a
// function another file names is left out under its target, one named
// without a target under its own name, and the function that happens to
// follow the line is traced.
func TestLinknameAcrossFiles(t *testing.T) {
	big := "{\n" + strings.Repeat("\tfmt.Println(len(xs) * 3 + len(xs) * 5 - len(xs))\n", 12) + "}\n\n"
	a := "package q\n\nimport (\n\t\"fmt\"\n\t_ \"unsafe\"\n)\n\n" +
		"//go:linkname far example.com/elsewhere.farName\n//go:linkname kept\nfunc Follows(xs []int) " + big
	b := "package q\n\nimport \"fmt\"\n\nfunc far(xs []int) " + big + "func kept(xs []int) " + big
	rs, err := Package("example.com/q", []File{{Path: "a.go", Src: []byte(a)}, {Path: "b.go", Src: []byte(b)}},
		Config{Threshold: DefaultThreshold, SkipInlinable: true, SkipLeaves: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(rs), []string{"example.com/q.Follows"}; !reflect.DeepEqual(got, want) {
		t.Errorf("instrumented %q, want %q", got, want)
	}
	var got []string
	for _, u := range rs[1].Untraced {
		got = append(got, u.Reason+":"+u.Name)
	}
	if want := []string{fdr.UntracedDirective + ":example.com/elsewhere.farName", fdr.UntracedDirective + ":example.com/q.kept"}; !reflect.DeepEqual(got, want) {
		t.Errorf("untraced %q, want %q", got, want)
	}
}
