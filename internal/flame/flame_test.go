package flame

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// sample is llvm-xray's per-thread flame output for a small program, in
// its spelling: every frame ends with ';', values are inclusive.
const sample = `thread_1;main; 100
thread_1;main;b; 60
thread_1;main;b;c; 20
thread_1;main;a; 30
thread_2;main; 50
thread_2;main;a; 50
`

type frame struct {
	stack string
	total uint64
	self  uint64
}

func walk(t *testing.T, tr *Tree) []frame {
	t.Helper()
	var out []frame
	if err := tr.Walk(func(f Frame) {
		out = append(out, frame{strings.Join(f.Stack, ";"), f.Total, f.Self})
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func mustParse(t *testing.T, in string, o ParseOptions) *Tree {
	t.Helper()
	tr, err := Parse(strings.NewReader(in), o)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return tr
}

func TestParseInclusivePerThread(t *testing.T) {
	tr := mustParse(t, sample, ParseOptions{Values: Inclusive})
	got := walk(t, tr)
	want := []frame{
		{"thread_1", 100, 0},
		{"thread_1;main", 100, 10},
		{"thread_1;main;a", 30, 30},
		{"thread_1;main;b", 60, 40},
		{"thread_1;main;b;c", 20, 20},
		{"thread_2", 50, 0},
		{"thread_2;main", 50, 0},
		{"thread_2;main;a", 50, 50},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("frames:\n got %v\nwant %v", got, want)
	}
	if total, _ := tr.Total(); total != 150 {
		t.Errorf("Total = %d, want 150", total)
	}
	if tr.Stacks() != 6 {
		t.Errorf("Stacks = %d, want 6", tr.Stacks())
	}
}

func TestParseMergeThreads(t *testing.T) {
	tr := mustParse(t, sample, ParseOptions{Values: Inclusive, MergeThreads: true})
	want := []frame{
		{"main", 150, 10},
		{"main;a", 80, 80},
		{"main;b", 60, 40},
		{"main;b;c", 20, 20},
	}
	if got := walk(t, tr); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("frames:\n got %v\nwant %v", got, want)
	}
	// Only a whole thread_<digits> first frame is a thread.
	tr = mustParse(t, "thread_x;f; 1\nthread_;g; 2\nthread_3; 4\nmain;thread_4; 8\n", ParseOptions{MergeThreads: true})
	want = []frame{
		{"main", 8, 0}, {"main;thread_4", 8, 8},
		{"thread_", 2, 0}, {"thread_;g", 2, 2},
		{"thread_3", 4, 4}, // a lone thread frame is kept: it is the whole stack
		{"thread_x", 1, 0}, {"thread_x;f", 1, 1},
	}
	if got := walk(t, tr); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("frames:\n got %v\nwant %v", got, want)
	}
}

func TestParseSelf(t *testing.T) {
	// flamegraph.pl spelling (no trailing ';'), values are the stack's own.
	in := "main;a 3\nmain;b;c 2\nmain 1\nmain;b 4\nmain;a 5\n"
	tr := mustParse(t, in, ParseOptions{Values: Self})
	want := []frame{
		{"main", 15, 1},
		{"main;a", 8, 8}, // repeated stacks are summed
		{"main;b", 6, 4},
		{"main;b;c", 2, 2},
	}
	if got := walk(t, tr); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("frames:\n got %v\nwant %v", got, want)
	}
}

func TestParseInclusiveMissingParent(t *testing.T) {
	// A caller that entered before the trace window has no line of its own,
	// or a value below its callees'; it spans its callees.
	tr := mustParse(t, "w;h; 40\nw;f; 2\nv; 1\nv;g; 7\n", ParseOptions{})
	want := []frame{
		{"v", 7, 0}, {"v;g", 7, 7},
		{"w", 42, 0}, {"w;f", 2, 2}, {"w;h", 40, 40},
	}
	if got := walk(t, tr); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("frames:\n got %v\nwant %v", got, want)
	}
}

func TestParseNames(t *testing.T) {
	// The value is what follows the last blank, so names keep their
	// spaces; CRLF, tabs and blank lines are tolerated; empty names are
	// frames too.
	in := "\r\nfoo(int, char);bar() const; 7\r\n\n  \nmain.(*Server).handle\tnet/http.HandlerFunc.ServeHTTP 3\na;;b; 1\n"
	tr := mustParse(t, in, ParseOptions{Values: Self})
	want := []frame{
		{"a", 1, 0}, {"a;", 1, 0}, {"a;;b", 1, 1},
		{"foo(int, char)", 7, 0}, {"foo(int, char);bar() const", 7, 7},
		{"main.(*Server).handle\tnet/http.HandlerFunc.ServeHTTP", 3, 3},
	}
	if got := walk(t, tr); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("frames:\n got %+v\nwant %+v", got, want)
	}
	// A ';' in a name cannot be told from a separator (documented).
	tr = mustParse(t, "main.G[go.shape.struct { A int; B string }]; 5\n", ParseOptions{})
	want = []frame{{"main.G[go.shape.struct { A int", 5, 0}, {"main.G[go.shape.struct { A int; B string }]", 5, 5}}
	if got := walk(t, tr); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("frames:\n got %+v\nwant %+v", got, want)
	}
}

func TestParseLongLine(t *testing.T) {
	// Longer than bufio's default buffer and a Scanner's token limit.
	var b strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&b, "github.com/example/project/internal/pkg%04d.(*Type).Method;", i)
	}
	b.WriteString(" 9\n")
	tr := mustParse(t, b.String(), ParseOptions{})
	n := 0
	if err := tr.Walk(func(f Frame) { n++ }); err != nil {
		t.Fatal(err)
	}
	if n != 3000 {
		t.Errorf("%d frames, want 3000", n)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		in   string
		line int
	}{
		{"a; 1\nb\n", 2},
		{"a;b; x\n", 1},
		{"a;b; -1\n", 1},
		{"a;b; 1.5\n", 1},
		{"\n\n 5\n", 3},
		{"; 5\n", 1},
		{"a; 99999999999999999999\n", 1},
	} {
		_, err := Parse(strings.NewReader(c.in), ParseOptions{})
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != c.line {
			t.Errorf("Parse(%q) = %v, want a ParseError on line %d", c.in, err, c.line)
		}
	}
	// Sums that do not fit in 64 bits are refused, not wrapped.
	for _, v := range []Values{Inclusive, Self} {
		in := "a;b; 18446744073709551615\na;c; 1\n"
		if _, err := Parse(strings.NewReader(in), ParseOptions{Values: v}); !errors.Is(err, errOverflow) {
			t.Errorf("%v: overflow: err = %v", v, err)
		}
	}
}

func TestParseValues(t *testing.T) {
	for _, s := range []string{"inclusive", "self"} {
		v, err := ParseValues(s)
		if err != nil || v.String() != s {
			t.Errorf("ParseValues(%q) = %v, %v", s, v, err)
		}
	}
	if _, err := ParseValues("total"); err == nil {
		t.Error("ParseValues(total) succeeded")
	}
}

// The SVG, read back.

type svgDoc struct {
	XMLName xml.Name `xml:"svg"`
	Width   string   `xml:"width,attr"`
	Height  string   `xml:"height,attr"`
	Label   string   `xml:"aria-label,attr"`
	Body    struct {
		Texts  []string `xml:"text"`
		Frames []svgG   `xml:"g"`
	} `xml:"g"`
}

type svgG struct {
	Title string `xml:"title"`
	Rect  struct {
		X      string `xml:"x,attr"`
		Y      string `xml:"y,attr"`
		Width  string `xml:"width,attr"`
		Height string `xml:"height,attr"`
		Fill   string `xml:"fill,attr"`
	} `xml:"rect"`
	Text *string `xml:"text"`
}

type drawnFrame struct {
	title, label, fill string
	hasLabel           bool
	x, y, w            float64
}

func readSVG(t *testing.T, b []byte) (svgDoc, []drawnFrame) {
	t.Helper()
	var doc svgDoc
	d := xml.NewDecoder(bytes.NewReader(b)) // strict: rejects bad characters and entities
	if err := d.Decode(&doc); err != nil {
		t.Fatalf("SVG is not well-formed XML: %v\n%s", err, b)
	}
	var out []drawnFrame
	for _, g := range doc.Body.Frames {
		f := drawnFrame{title: g.Title, fill: g.Rect.Fill, x: atof(t, g.Rect.X), y: atof(t, g.Rect.Y), w: atof(t, g.Rect.Width)}
		if g.Text != nil {
			f.label, f.hasLabel = *g.Text, true
		}
		out = append(out, f)
	}
	return doc, out
}

func atof(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("coordinate %q: %v", s, err)
	}
	return v
}

func render(t *testing.T, tr *Tree, o Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := tr.WriteSVG(&b, o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func near(a, b, eps float64) bool { return math.Abs(a-b) <= eps }

func TestSVGGeometry(t *testing.T) {
	tr := mustParse(t, sample, ParseOptions{MergeThreads: true})
	out := render(t, tr, Options{Title: "demo", Unit: "ticks", Width: 1200})
	doc, frames := readSVG(t, out)
	if doc.Width != "1200" || doc.Label != "demo" {
		t.Errorf("svg width=%q aria-label=%q", doc.Width, doc.Label)
	}
	// 1180 px for 150 ticks; names sorted at each level; callees start at
	// their caller's left edge; self time is the gap on the right.
	type want struct {
		title string
		x, w  float64
		level int
	}
	s := 1180.0 / 150
	wants := []want{
		{"all (150 ticks, 100.00%)", 10, 1180, 0},
		{"main (150 ticks, 100.00%)", 10, 1180, 1},
		{"a (80 ticks, 53.33%)", 10, 80 * s, 2},
		{"b (60 ticks, 40.00%)", 10 + 80*s, 60 * s, 2},
		{"c (20 ticks, 13.33%)", 10 + 80*s, 20 * s, 3},
	}
	if len(frames) != len(wants) {
		t.Fatalf("%d frames drawn, want %d:\n%s", len(frames), len(wants), out)
	}
	y0 := frames[0].y
	for i, w := range wants {
		f := frames[i]
		if f.title != w.title || !near(f.x, w.x, 0.005) || !near(f.w, w.w, 0.01) || !near(f.y, y0+16*float64(w.level), 1e-9) {
			t.Errorf("frame %d: %q x=%v w=%v y=%v; want %q x=%.3f w=%.3f level %d", i, f.title, f.x, f.w, f.y, w.title, w.x, w.w, w.level)
		}
	}
	if !strings.Contains(strings.Join(doc.Body.Texts, "\n"), "total 150 ticks") {
		t.Errorf("header %q lacks the total", doc.Body.Texts)
	}
}

// TestSVGLevelsSum checks, on random trees, that every row's widths add up
// to its share of the total and that callees lie inside their caller.
func TestSVGLevelsSum(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for iter := 0; iter < 20; iter++ {
		var b strings.Builder
		levelSum := map[int]uint64{}
		var total uint64
		for i := 0; i < 1+r.Intn(60); i++ {
			depth := 1 + r.Intn(6)
			var st []string
			for d := 0; d < depth; d++ {
				st = append(st, fmt.Sprintf("f%d", r.Intn(3)))
			}
			v := uint64(1 + r.Intn(1000))
			fmt.Fprintf(&b, "%s %d\n", strings.Join(st, ";"), v)
			total += v
			for d := 1; d <= depth; d++ {
				levelSum[d] += v // self values: every ancestor row grows by v
			}
		}
		tr := mustParse(t, b.String(), ParseOptions{Values: Self})
		_, frames := readSVG(t, render(t, tr, Options{Width: 1000, MinWidth: 1e-9}))
		y0 := frames[0].y
		rows := map[int][]drawnFrame{}
		for _, f := range frames {
			rows[int(math.Round((f.y-y0)/16))] = append(rows[int(math.Round((f.y-y0)/16))], f)
		}
		for level, fs := range rows {
			if level == 0 {
				continue
			}
			sum := 0.0
			for _, f := range fs {
				sum += f.w
			}
			want := 980 * float64(levelSum[level]) / float64(total)
			if !near(sum, want, 0.01*float64(len(fs))) {
				t.Errorf("iter %d level %d: widths sum to %.3f, want %.3f", iter, level, sum, want)
			}
			for _, f := range fs {
				inside := false
				for _, p := range rows[level-1] {
					if f.x >= p.x-1e-9 && f.x+f.w <= p.x+p.w+1e-9 {
						inside = true
					}
				}
				if !inside {
					t.Errorf("iter %d level %d: %q [%v,%v] lies outside every caller %+v", iter, level, f.title, f.x, f.x+f.w, rows[level-1])
				}
			}
		}
	}
}

func TestSVGEscaping(t *testing.T) {
	names := []string{
		`<script>alert("x")</script>`,
		`a&b 'c' "d"`,
		"bad\xff\xfebytes",
		"ctl\x01\x7f\u0085",
		"rtl\u202eevil",
		"ok é 函数",
		`back\slash`,
		"\ufffd",
	}
	want := []string{
		`<script>alert("x")</script>`,
		`a&b 'c' "d"`,
		`bad\xff\xfebytes`,
		`ctl\x01\x7f\xc2\x85`,
		`rtl\xe2\x80\xaeevil`,
		"ok é 函数",
		`back\slash`,
		`\xef\xbf\xbd`,
	}
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s 10\n", n)
	}
	tr := mustParse(t, b.String(), ParseOptions{Values: Self})
	out := render(t, tr, Options{Title: `T<&>"`, Subtitle: "sub\x00", Unit: "u&u", Width: 4000})
	if bytes.Contains(out, []byte("<script")) || !utf8.Valid(out) {
		t.Fatalf("unescaped or invalid output:\n%s", out)
	}
	doc, frames := readSVG(t, out)
	if doc.Label != `T<&>"` || doc.Body.Texts[0] != `T<&>"` || doc.Body.Texts[1] != `sub\x00` {
		t.Errorf("header: label %q texts %q", doc.Label, doc.Body.Texts)
	}
	got := map[string]bool{}
	for _, f := range frames[1:] {
		got[f.title] = true
		if !f.hasLabel || !strings.HasPrefix(f.title, f.label+" (") {
			t.Errorf("frame %q has label %q", f.title, f.label)
		}
	}
	for _, w := range want {
		if title := w + " (10 u&u, 12.50%)"; !got[title] {
			t.Errorf("no frame titled %q; have %v", title, got)
		}
	}
}

func TestSVGLabels(t *testing.T) {
	for _, c := range []struct {
		name string
		w    float64
		want string
	}{
		{"main.(*Server).handle", 1000, "main.(*Server).handle"},
		{"main.(*Server).handle", 6 + 21*7.2, "main.(*Server).handle"},
		{"main.(*Server).handle", 6 + 20*7.2, "main.(*Server).hand…"},
		{"main.(*Server).handle", 50, "main.…"},
		{"函数函数函数", 6 + 4*7.2, "函数函…"},
		{"abcdef", 6 + 3*7.2, "ab…"},
		{"abcdef", 6 + 2.9*7.2, ""},
		{"ab", 6 + 2.9*7.2, ""}, // too narrow for any label, even a short one
	} {
		if got := fit(c.name, c.w); got != c.want {
			t.Errorf("fit(%q, %v) = %q, want %q", c.name, c.w, got, c.want)
		}
	}
	// In a drawing, every label fits its frame and is a prefix of the name.
	in := "net/http.(*conn).serve;net/http.serverHandler.ServeHTTP;main.(*Server).handle 30\nnet/http.(*conn).serve;x 1\nnet/http.(*conn).serve;main.(*cache).get 3\n"
	_, frames := readSVG(t, render(t, mustParse(t, in, ParseOptions{Values: Self}), Options{Width: 400}))
	labelled := 0
	for _, f := range frames {
		if !f.hasLabel {
			continue
		}
		labelled++
		n := utf8.RuneCountInString(f.label)
		if float64(n)*charWidth > f.w-2*textPad+1e-9 {
			t.Errorf("label %q (%d chars) overflows %v px", f.label, n, f.w)
		}
		name := f.title[:strings.LastIndex(f.title, " (")]
		if f.label != name && !strings.HasPrefix(name, strings.TrimSuffix(f.label, "…")) {
			t.Errorf("label %q is not a truncation of %q", f.label, name)
		}
	}
	if labelled < 3 {
		t.Errorf("only %d labels drawn", labelled)
	}
}

func TestColour(t *testing.T) {
	hex := regexp.MustCompile(`^#[0-9a-f]{6}$`)
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		name := fmt.Sprintf("main.f%d", i)
		c := colour(name)
		if c != colour(name) || !hex.MatchString(c) {
			t.Fatalf("colour(%q) = %q", name, c)
		}
		r, _ := strconv.ParseUint(c[1:3], 16, 8)
		g, _ := strconv.ParseUint(c[3:5], 16, 8)
		b, _ := strconv.ParseUint(c[5:7], 16, 8)
		if r < 205 || g > r || b > 75 {
			t.Errorf("colour(%q) = %s is not warm", name, c)
		}
		seen[c] = true
	}
	if len(seen) < 150 {
		t.Errorf("only %d colours for 200 names", len(seen))
	}
}

func TestDeterministic(t *testing.T) {
	lines := strings.Split(strings.TrimSpace(sample), "\n")
	var outs [][]byte
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 10; i++ {
		r.Shuffle(len(lines), func(a, b int) { lines[a], lines[b] = lines[b], lines[a] })
		tr := mustParse(t, strings.Join(lines, "\n"), ParseOptions{})
		outs = append(outs, render(t, tr, Options{Title: "x"}))
	}
	for i := range outs {
		if !bytes.Equal(outs[i], outs[0]) {
			t.Fatalf("output %d differs from output 0 for a reordered input", i)
		}
	}
	// Sibling order is by name, independent of input order.
	_, frames := readSVG(t, outs[0])
	var titles []string
	for _, f := range frames {
		titles = append(titles, f.title[:strings.Index(f.title, " ")])
	}
	if fmt.Sprint(titles) != "[all thread_1 main a b c thread_2 main a]" {
		t.Errorf("draw order %v", titles)
	}
}

func TestEmpty(t *testing.T) {
	for _, in := range []string{"", "\n\n", "a;b; 0\n"} {
		tr := mustParse(t, in, ParseOptions{})
		out := render(t, tr, Options{})
		doc, frames := readSVG(t, out)
		if len(frames) != 0 || !strings.Contains(strings.Join(doc.Body.Texts, "|"), "no samples") {
			t.Errorf("input %q: %d frames, texts %q", in, len(frames), doc.Body.Texts)
		}
		if h := atof(t, doc.Height); h < minHeight {
			t.Errorf("input %q: height %v", in, h)
		}
	}
}

func TestDeep(t *testing.T) {
	const depth = 800
	var st []string
	for i := 0; i < depth; i++ {
		st = append(st, fmt.Sprintf("main.recurse%d", i%7))
	}
	in := strings.Join(st, ";") + "; 5\n" + strings.Join(st[:depth/2], ";") + "; 9\n"
	tr := mustParse(t, in, ParseOptions{Values: Self})
	doc, frames := readSVG(t, render(t, tr, Options{}))
	if len(frames) != depth+1 {
		t.Fatalf("%d frames drawn, want %d", len(frames), depth+1)
	}
	last := frames[len(frames)-1]
	if want := frames[0].y + 16*depth; last.y != want {
		t.Errorf("deepest frame at y=%v, want %v", last.y, want)
	}
	if h := atof(t, doc.Height); h < last.y+16 {
		t.Errorf("height %v cuts the deepest frame at %v", h, last.y)
	}
	if !near(last.w, 1180*5.0/14, 0.01) {
		t.Errorf("deepest width %v", last.w)
	}
}

func TestWide(t *testing.T) {
	const n = 100000
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "thread_%d;main.handle;pkg%d;f%d; %d\n", i%8, i%50, i, 1+i%10)
	}
	tr := mustParse(t, b.String(), ParseOptions{MergeThreads: true})
	out := render(t, tr, Options{})
	doc, frames := readSVG(t, out)
	// 10^5 leaves of ~0.01 px are not drawn; the header says so.
	for _, f := range frames {
		if f.w < 0.1 {
			t.Fatalf("frame %q is %v px wide", f.title, f.w)
		}
	}
	header := strings.Join(doc.Body.Texts, "|")
	if !strings.Contains(header, "100,000 stacks") || !strings.Contains(header, "100,000 frames under 0.1 px not drawn") {
		t.Errorf("header %q", header)
	}
	if len(frames) != 2+50 || len(out) > 100<<10 {
		t.Errorf("%d frames, %d bytes", len(frames), len(out))
	}
	var titles []string
	for _, f := range frames[2:] {
		titles = append(titles, f.title[:strings.Index(f.title, " ")])
	}
	if !sort.StringsAreSorted(titles) {
		t.Errorf("siblings not sorted: %v", titles)
	}
}

func BenchmarkWide(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 100000; i++ {
		fmt.Fprintf(&sb, "thread_%d;main.(*Server).handle;pkg%d.(*T).f%d;leaf%d; %d\n", i%8, i%50, i%977, i, 1+i%10)
	}
	in := sb.String()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		tr, err := Parse(strings.NewReader(in), ParseOptions{})
		if err != nil {
			b.Fatal(err)
		}
		var out bytes.Buffer
		if err := tr.WriteSVG(&out, Options{MinWidth: 1e-9}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAddChild: a tree built frame by frame with AddChild is the tree Add
// builds from the same stacks.
func TestAddChild(t *testing.T) {
	stacks := [][]string{{"a"}, {"a", "b"}, {"a", "b", "c"}, {"a", "d"}, {"e"}, {"a", "b"}}
	values := []uint64{1, 2, 3, 4, 5, 6}
	byAdd, byChild := NewTree(Self), NewTree(Self)
	for i, s := range stacks {
		byAdd.Add(s, values[i])
		at := Root
		for j, name := range s {
			v := uint64(0)
			if j == len(s)-1 {
				v = values[i]
			}
			at = byChild.AddChild(at, name, v)
		}
	}
	dump := func(tr *Tree) string {
		var b strings.Builder
		if err := tr.Walk(func(f Frame) { fmt.Fprintf(&b, "%v %d %d\n", f.Stack, f.Total, f.Self) }); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if a, c := dump(byAdd), dump(byChild); a != c {
		t.Errorf("Add:\n%s\nAddChild:\n%s", a, c)
	}
	if total, err := byChild.Total(); err != nil || total != 21 {
		t.Errorf("total %d (%v), want 21", total, err)
	}
}
