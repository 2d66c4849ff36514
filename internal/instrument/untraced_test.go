package instrument

import (
	"fmt"
	"go/parser"
	"go/token"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// registration returns the arguments of the RegisterUntraced call in src,
// nil when there is none.
func registration(t *testing.T, src []byte) []string {
	t.Helper()
	s := string(src)
	i := strings.Index(s, ".RegisterUntraced(")
	if i < 0 {
		return nil
	}
	if strings.Count(s, ".RegisterUntraced(") != 1 {
		t.Fatalf("two registrations:\n%s", s)
	}
	call := s[i+len(".RegisterUntraced("):]
	call = call[:strings.Index(call, ")/*line")]
	var args []string
	for a := range strings.SplitSeq(call, ", ") {
		if u, err := strconv.Unquote(a); err == nil {
			a = u
		}
		args = append(args, a)
	}
	return args
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
	args := registration(t, rs[0].Src)
	if len(args) != 5 || args[0] != "example.com/q" || args[1] != strconv.Itoa(MaxUntracedNames+5) || args[2] != "0" || args[3] != "1" {
		t.Fatalf("registration %q", args)
	}
	lines := strings.Split(strings.TrimSuffix(args[4], "\n"), "\n")
	if len(lines) != MaxUntracedNames || lines[0] != "l\texample.com/q.Leaf" || lines[1] != "s\texample.com/q.s0" {
		t.Errorf("names %q", lines)
	}
	if registration(t, rs[1].Src) != nil {
		t.Error("the second file registers too")
	}
	if got := registration(t, rs[2].Src); len(got) != 5 || got[1] != "1" || got[4] != "s\texample.com/q.helper\n" {
		t.Errorf("test files' registration %q", got)
	}
	if len(rs[0].Untraced) != 1 || rs[0].Untraced[0].Reason != SkipLeaf || len(rs[1].Untraced) != MaxUntracedNames+5 {
		t.Errorf("Result.Untraced: %d, %d", len(rs[0].Untraced), len(rs[1].Untraced))
	}

	// Nothing instrumented: the first file still registers, and imports
	// xrayauto for it.
	rs, err = Package("example.com/q", []File{{Path: "b.go", Src: []byte(b)}}, Config{Threshold: DefaultThreshold})
	if err != nil {
		t.Fatal(err)
	}
	if got := registration(t, rs[0].Src); len(got) != 5 || got[1] != strconv.Itoa(MaxUntracedNames+5) {
		t.Errorf("registration without tables %q", got)
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "b.go", rs[0].Src, 0); err != nil {
		t.Errorf("rewrite does not parse: %v\n%s", err, rs[0].Src)
	}
	// Everything traced: nothing to register.
	rs, err = Package("example.com/q", []File{{Path: "b.go", Src: []byte(b)}}, Config{Threshold: 0})
	if err != nil {
		t.Fatal(err)
	}
	if got := registration(t, rs[0].Src); got != nil {
		t.Errorf("registration with everything traced: %q", got)
	}
}
