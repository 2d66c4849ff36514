package instrument

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/goxray/xray/fdr"
)

// flatBody is n branches and assignments: no call, no loop.
func flatBody(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "\tif a > %d {\n\t\ta = a*3 + b\n\t}\n", i)
	}
	return b.String()
}

// leafSrc is a package of functions that differ from a call-free leaf of
// about 150 syntax nodes (above the threshold, beyond the inlining
// budget, below leafMaxSize) in one respect each.
func leafSrc() string {
	flat := flatBody(14)
	fn := func(name, extra string) string {
		return "func " + name + "(a, b int, s []byte) int {\n" + flat + extra + "\treturn a\n}\n\n"
	}
	return "package q\n\nimport \"fmt\"\n\n" +
		"type scanner struct{ i int }\n\n" +
		"func clamp(a int) int {\n\tif a > 9 {\n\t\treturn 9\n\t}\n\treturn a\n}\n\n" +
		"func (s *scanner) peek(b []byte) byte {\n\tif s.i < len(b) {\n\t\treturn b[s.i]\n\t}\n\treturn 0\n}\n\n" +
		"//go:noinline\nfunc clampN(a int) int {\n\tif a > 9 {\n\t\treturn 9\n\t}\n\treturn a\n}\n\n" +
		"//xray:always\nfunc clampA(a int) int {\n\tif a > 9 {\n\t\treturn 9\n\t}\n\treturn a\n}\n\n" +
		"func count(s []byte) int {\n\tn := 0\n\tfor n < len(s) && s[n] == ' ' {\n\t\tn++\n\t}\n\treturn n\n}\n\n" +
		fn("Flat", "") +
		fn("Builtins", "\ta += len(s) + cap(s) + min(a, b) + int(uint8(b))\n") +
		fn("CallsLeaf", "\ta += clamp(b)\n") +
		fn("CallsLeafMethod", "\tvar sc scanner\n\ta += int(sc.peek(s))\n") +
		fn("CallsLoop", "\ta += count(s)\n") +
		fn("CallsNoinline", "\ta += clampN(b)\n") +
		fn("CallsAlways", "\ta += clampA(b)\n") +
		fn("Loops", "\tfor i := range s {\n\t\ta += int(s[i])\n\t}\n") +
		fn("Gotos", "again:\n\tif a > 1000 {\n\t\ta /= 2\n\t\tgoto again\n\t}\n") +
		fn("CallsOther", "\tfmt.Println(a)\n") +
		fn("Converts", "\tif string(s) == \"x\" {\n\t\ta++\n\t}\n") +
		fn("Appends", "\ts = append(s, 1)\n") +
		fn("Panics", "\tif a < 0 {\n\t\tpanic(a)\n\t}\n") +
		fn("Recurses", "\tif a > 0 {\n\t\ta = Recurses(a-1, b, s)\n\t}\n") +
		fn("Defers", "\tdefer func() {}()\n") +
		fn("Big", flatBody(3)) +
		"//xray:always\n" + fn("Always", "")
}

func leafBodies(t *testing.T, src string) map[string]*ast.BlockStmt {
	t.Helper()
	af, err := parser.ParseFile(token.NewFileSet(), "q.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*ast.BlockStmt{}
	for _, d := range af.Decls {
		if f, ok := d.(*ast.FuncDecl); ok {
			out[f.Name.Name] = f.Body
		}
	}
	return out
}

// TestCallFreeLeaves: at a threshold above 0, SkipLeaves leaves alone
// the functions that call nothing the compiler does not inline away, loop
// nowhere (not in an inlined callee either) and are smaller than
// leafMaxSize, and lists them in Result.Leaves; a call of another
// package or of one that is not inlined (//go:noinline, //xray:always),
// a conversion or builtin that calls the runtime, panic,
// recursion, defer, a loop (for, range, goto) or a larger body keeps a
// function traced, and so does //xray:always. LeafLoops leaves out the
// looping leaves too; without SkipLeaves every one is traced.
func TestCallFreeLeaves(t *testing.T) {
	src := leafSrc()
	bodies := leafBodies(t, src)
	// The cases are what they claim: above the threshold, not inlinable,
	// below leafMaxSize (Big above it).
	in := newInlineInfo(nil)
	for name, body := range bodies {
		size := bodySize(body)
		switch name {
		case "clamp", "clampN", "clampA", "peek", "count":
			continue
		case "Big":
			if size < leafMaxSize || size > leafMaxSize+50 {
				t.Fatalf("Big has %d nodes, want just above %d", size, leafMaxSize)
			}
		default:
			if size < 120 || size >= leafMaxSize {
				t.Fatalf("%s has %d nodes, want 120 to %d", name, size, leafMaxSize)
			}
		}
		if in.inlinable(body) {
			t.Fatalf("%s would be inlined (estimate %d): the case does not reach the leaf rule", name, in.estimate(body))
		}
	}
	traced := []string{"q.clampA", "q.CallsNoinline", "q.CallsAlways", "q.CallsLoop", "q.Loops", "q.Gotos", "q.CallsOther", "q.Converts", "q.Appends", "q.Panics", "q.Recurses", "q.Defers", "q.Big", "q.Always"}
	leaves := []string{"q.Flat", "q.Builtins", "q.CallsLeaf", "q.CallsLeafMethod"}
	for _, c := range []struct {
		name           string
		cfg            Config
		traced, leaves []string
	}{
		{"default", Config{Threshold: DefaultThreshold, SkipInlinable: true, SkipLeaves: true}, traced, leaves},
		{"LeafLoops", Config{Threshold: DefaultThreshold, SkipInlinable: true, SkipLeaves: true, LeafLoops: true},
			slices.DeleteFunc(slices.Clone(traced), func(n string) bool { return n == "q.CallsLoop" || n == "q.Loops" || n == "q.Gotos" }),
			[]string{"q.Flat", "q.Builtins", "q.CallsLeaf", "q.CallsLeafMethod", "q.CallsLoop", "q.Loops", "q.Gotos"}},
		{"no SkipLeaves", Config{Threshold: DefaultThreshold, SkipInlinable: true}, append(slices.Clone(leaves), traced...), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs, err := Package("q", []File{{Path: "q.go", Src: []byte(src)}}, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := names(rs)
			slices.Sort(got)
			want := slices.Sorted(slices.Values(c.traced))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("traced %q, want %q", got, want)
			}
			var gotLeaves []string
			for _, f := range rs[0].Leaves {
				gotLeaves = append(gotLeaves, f.Name)
				if f.Line == 0 || f.Size < 120 {
					t.Errorf("leaf %+v: no line or size", f)
				}
			}
			if !reflect.DeepEqual(gotLeaves, c.leaves) || reasons(rs[0])[fdr.UntracedLeaf] != len(c.leaves) {
				t.Errorf("leaves %q (untraced %+v), want %q", gotLeaves, rs[0].Untraced, c.leaves)
			}
			// A leaf is left as written: its gate and copy are absent.
			for _, l := range gotLeaves {
				name := strings.TrimPrefix(l, "q.")
				if strings.Contains(string(rs[0].Src), "__xray_"+name+"(") {
					t.Errorf("%s has a traced copy", l)
				}
			}
		})
	}
}
