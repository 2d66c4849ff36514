package instrmap

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goxray/xray/internal/xraytool"
)

// These tests run the real llvm-xray ($LLVM_XRAY, default llvm-xray; the
// Makefile runs the suite with 14 and 19) on maps paired with hand-built
// traces and check what a user would read.

func run(t testing.TB, bin string, args ...string) string {
	t.Helper()
	out, err := xraytool.Run(bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestToolsNamesAndLines(t *testing.T) {
	bin := xraytool.Bin(t)
	dir := t.TempDir()
	m := writeMap(t, dir, sample)
	// main.main → Handle → LRU.Get, then #4 under Handle; main.noFile, the
	// gap id 6 and the closure under main.main; id 11 is past the map.
	tr := writeTrace(t, dir, trace([]call{
		enter(1), enter(2), enter(3), exit(3), enter(4), exit(4), exit(2),
		enter(5), exit(5), enter(6), exit(6),
		enter(7), enter(11), exit(11), exit(7),
		enter(8), exit(8), enter(9), exit(9), enter(10), exit(10),
		exit(1),
	}))
	xraytool.Check(t, bin, tr)

	want := map[uint32]accountRow{
		1:  {1, "main.go:10:0", "main.main"},
		2:  {1, "server.go:42:0", "main.(*Server).Handle"},
		3:  {1, "lru.go:7:0", "github.com/acme/cache.(*LRU[...]).Get"},
		4:  {1, "anon.go:5:0", "#4"},
		5:  {1, "<invalid>:0:0", "main.noFile"},
		6:  {1, "<invalid>:0:0", "#6"},
		7:  {1, "main.go:20:0", "main.main.func1"},
		8:  {1, "x.go:3:0", "rel"},
		9:  {1, "y.go:4:0", "bare"},
		10: {1, "z.go:0:0", "root"},
		11: {1, "(unknown)", "#11"},
	}
	out := run(t, bin, "account", "-instr_map="+m, tr)
	if got := parseAccount(t, out); !maps.Equal(got, want) {
		t.Errorf("account:\n%s\ngot  %v\nwant %v", out, got, want)
	}

	wantNames := map[uint32]string{}
	for id, r := range want {
		wantNames[id] = r.name
	}
	out = run(t, bin, "graph", "-instr_map="+m, tr)
	if got := parseGraph(out); !maps.Equal(got, wantNames) {
		t.Errorf("graph labels %v, want %v", got, wantNames)
	}
	out = run(t, bin, "convert", "-symbolize", "-instr_map="+m, "-output-format=yaml", tr)
	if got := parseSymbolized(t, out); !maps.Equal(got, wantNames) {
		t.Errorf("convert -symbolize names %v, want %v", got, wantNames)
	}

	out = run(t, bin, "stack", "-all-stacks", "-stack-format=flame", "-instr_map="+m, tr)
	var stacks []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		i := strings.LastIndexByte(l, ' ')
		stacks = append(stacks, l[:i])
	}
	slices.Sort(stacks)
	wantStacks := []string{
		"thread_101;main.main;",
		"thread_101;main.main;#6;",
		"thread_101;main.main;bare;",
		"thread_101;main.main;main.(*Server).Handle;",
		"thread_101;main.main;main.(*Server).Handle;#4;",
		"thread_101;main.main;main.(*Server).Handle;github.com/acme/cache.(*LRU[...]).Get;",
		"thread_101;main.main;main.main.func1;",
		"thread_101;main.main;main.main.func1;#11;",
		"thread_101;main.main;main.noFile;",
		"thread_101;main.main;rel;",
		"thread_101;main.main;root;",
	}
	if !slices.Equal(stacks, wantStacks) {
		t.Errorf("flame stacks:\n%s\nwant\n%s", strings.Join(stacks, "\n"), strings.Join(wantStacks, "\n"))
	}
	out = run(t, bin, "stack", "-instr_map="+m, tr)
	for _, name := range wantNames {
		if !strings.Contains(out, name) {
			t.Errorf("stack output lacks %q:\n%s", name, out)
		}
	}

	// extract reads the map alone: entry k is id k at address 16·k.
	out = run(t, bin, "extract", "--symbolize", m)
	var lines []string
	for id := 1; id <= 10; id++ {
		lines = append(lines, fmt.Sprintf("- { id: %d, address: 0x%X, function: 0x%X, kind: function-enter, always-instrument: true, function-name: ", id, 16*id, 16*id))
	}
	got := regexp.MustCompile(`(?m)^- \{.*function-name: `).FindAllString(out, -1)
	if !slices.Equal(got, lines) {
		t.Errorf("extract:\n%s", out)
	}
}

func TestToolsOddNames(t *testing.T) {
	bin := xraytool.Bin(t)
	dir := t.TempDir()
	// name: what Write is given; plain: what every tool shows when it does
	// not demangle; shown: what account and graph show.
	cases := []struct{ name, plain, shown string }{
		{"main.(*Server).Handle", "", ""},
		{"pkg/path.Func-fm", "", ""},
		{"main.main.F[...].func2", "", ""},
		{"main.init.0", "", ""},
		{"type:.eq.main.T", "", ""},
		{"runtime·old", "", ""},
		{"main.Grüße", "", ""},
		{"日本.関数", "", ""},
		{"main.G[go.shape.struct { X int }]", "", ""},
		{"  leading and trailing  ", "", ""},
		{"#42", "", ""},
		{"$x.main", "", ""},
		{strings.Repeat("long.", 2000), "", ""},
		{`quote"d'\`, `quote'd'/`, ""},
		{"new\nline\ttab", "new?line?tab", ""},
		{"a;b", "a:b", ""},
		{"bad\xffutf8", "bad?utf8", ""},
		{"_Zfoo", "", ""},
		{"_ZN3foo3barEv", "", "foo::bar()"},
		{"?foo@@YAXXZ", "", "foo(void)"},
	}
	var funcs []Func
	var ids []uint32
	for i := range cases {
		c := &cases[i]
		if c.plain == "" {
			c.plain = c.name
		}
		if c.shown == "" {
			c.shown = c.plain
		}
		id := uint32(i + 1)
		funcs = append(funcs, Func{ID: id, Name: c.name, File: "/src/odd.go", Line: i + 1})
		ids = append(ids, id)
	}
	m := writeMap(t, dir, funcs)
	tr := writeTrace(t, dir, flat(ids...))

	rows := parseAccount(t, run(t, bin, "account", "-instr_map="+m, tr))
	labels := parseGraph(run(t, bin, "graph", "-instr_map="+m, tr))
	plain := parseSymbolized(t, run(t, bin, "convert", "-symbolize", "-no-demangle", "-instr_map="+m, "-output-format=yaml", tr))
	demangled := parseSymbolized(t, run(t, bin, "convert", "-symbolize", "-instr_map="+m, "-output-format=yaml", tr))
	for i, c := range cases {
		id := uint32(i + 1)
		if r := rows[id]; r.name != c.shown || r.loc != fmt.Sprintf("odd.go:%d:0", id) {
			t.Errorf("account %d: %q at %s, want %q", id, trunc(r.name), r.loc, trunc(c.shown))
		}
		// graph cuts labels to 40 bytes and "...".
		if want := c.shown; labels[id] != want && (len(want) <= 40 || labels[id] != want[:40]+"...") {
			t.Errorf("graph %d: %q, want %q", id, trunc(labels[id]), trunc(want))
		}
		if plain[id] != c.plain {
			t.Errorf("convert -no-demangle %d: %q, want %q", id, trunc(plain[id]), trunc(c.plain))
		}
		if demangled[id] != c.shown {
			t.Errorf("convert %d: %q, want %q", id, trunc(demangled[id]), trunc(c.shown))
		}
	}

	// llvm-xray writes names into the Chrome trace JSON without escaping;
	// with the replaced bytes the file is valid JSON and keeps the names.
	out := run(t, bin, "convert", "-symbolize", "-no-demangle", "-instr_map="+m, "-output-format=trace_event", tr)
	var doc struct {
		TraceEvents []struct {
			Name string `json:"name"`
			Ph   string `json:"ph"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("trace_event output is not JSON: %v", err)
	}
	var names []string
	for _, e := range doc.TraceEvents {
		if e.Ph == "B" {
			names = append(names, e.Name)
		}
	}
	var want []string
	for _, c := range cases {
		want = append(want, c.plain)
	}
	if !slices.Equal(names, want) {
		t.Errorf("trace_event names %q, want %q", names, want)
	}
}

func TestToolsEmptyMap(t *testing.T) {
	bin := xraytool.Bin(t)
	dir := t.TempDir()
	m := writeMap(t, dir, nil)
	tr := writeTrace(t, dir, trace([]call{enter(1), enter(2), exit(2), exit(1)}))
	want := map[uint32]accountRow{1: {1, "(unknown)", "#1"}, 2: {1, "(unknown)", "#2"}}
	if got := parseAccount(t, run(t, bin, "account", "-instr_map="+m, tr)); !maps.Equal(got, want) {
		t.Errorf("account %v, want %v", got, want)
	}
	if got := parseGraph(run(t, bin, "graph", "-instr_map="+m, tr)); !maps.Equal(got, map[uint32]string{1: "#1", 2: "#2"}) {
		t.Errorf("graph labels %v", got)
	}
	out := run(t, bin, "stack", "-all-stacks", "-stack-format=flame", "-instr_map="+m, tr)
	if !strings.Contains(out, "thread_101;#1;#2; ") {
		t.Errorf("flame stacks:\n%s", out)
	}
	if out := run(t, bin, "extract", m); strings.Contains(out, "id:") {
		t.Errorf("extract of an empty map lists entries:\n%s", out)
	}
}

func TestToolsScale(t *testing.T) {
	bin := xraytool.Bin(t)
	dir := t.TempDir()
	funcs := bigFuncs(100_000)
	m := writeMap(t, dir, funcs)
	ids := []uint32{1, 50_000, 100_000, 100_001}
	tr := writeTrace(t, dir, flat(ids...))
	rows := parseAccount(t, run(t, bin, "account", "-instr_map="+m, tr))
	names := parseSymbolized(t, run(t, bin, "convert", "-symbolize", "-instr_map="+m, "-output-format=yaml", tr))
	for _, id := range ids[:3] {
		fn := funcs[id-1]
		base := fn.File[strings.LastIndexByte(fn.File, '/')+1:]
		if r := rows[id]; r.name != fn.Name || r.loc != fmt.Sprintf("%s:%d:0", base, fn.Line) {
			t.Errorf("account %d: %+v, want %s at %s:%d", id, r, fn.Name, base, fn.Line)
		}
		if names[id] != fn.Name {
			t.Errorf("convert %d: %q, want %q", id, names[id], fn.Name)
		}
	}
	if r := rows[100_001]; r.name != "#100001" || r.loc != "(unknown)" {
		t.Errorf("account 100001 (past the map): %+v", r)
	}
}
