package main

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const folded = "thread_1;main; 100\nthread_1;main;b; 60\nthread_2;main; 50\nthread_2;main;a; 50\n"

func xrayflame(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, strings.NewReader(stdin), &o, &e)
	return code, o.String(), e.String()
}

// titles returns the tooltips of a well-formed SVG.
func titles(t *testing.T, svg string) []string {
	t.Helper()
	var out []string
	d := xml.NewDecoder(strings.NewReader(svg))
	inTitle := false
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not XML: %v\n%s", err, svg)
			}
			return out
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			inTitle = tok.Name.Local == "title"
		case xml.EndElement:
			inTitle = false
		case xml.CharData:
			if inTitle {
				out = append(out, string(tok))
			}
		}
	}
}

func TestStdinToStdout(t *testing.T) {
	code, out, errs := xrayflame(t, folded, "-title", "demo & co", "-unit", "cycles")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got := strings.Join(titles(t, out), "|")
	want := "all (150 cycles, 100.00%)|thread_1 (100 cycles, 66.67%)|main (100 cycles, 66.67%)|b (60 cycles, 40.00%)|thread_2 (50 cycles, 33.33%)|main (50 cycles, 33.33%)|a (50 cycles, 33.33%)"
	if got != want {
		t.Errorf("tooltips\n got %s\nwant %s", got, want)
	}
	if !strings.Contains(out, "demo &amp; co") {
		t.Error("title missing or unescaped")
	}
}

func TestFileToFileMergeSelf(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.folded")
	if err := os.WriteFile(in, []byte(folded), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.svg")
	code, stdout, errs := xrayflame(t, "", "-merge-threads", "-values", "self", "-o", out, in)
	if code != 0 || stdout != "" || errs != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, errs)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// Self values: main = 100+50 own + 60+50 callees.
	if got := strings.Join(titles(t, string(b)), "|"); got != "all (260 ticks, 100.00%)|main (260 ticks, 100.00%)|a (50 ticks, 19.23%)|b (60 ticks, 23.08%)" {
		t.Errorf("tooltips %s", got)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("directory holds %d entries, want in and out only", len(ents))
	}
}

func TestEmptyInput(t *testing.T) {
	code, out, _ := xrayflame(t, "")
	if code != 0 || !strings.Contains(out, ">no samples<") || len(titles(t, out)) != 0 {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		stdin string
		args  []string
		code  int
		msg   string
	}{
		{"a; 1\nb;c\n", nil, 1, "standard input: flame: line 2"},
		{"", []string{"/nonexistent/x.folded"}, 1, "no such file"},
		{"", []string{"-values", "total"}, 2, "inclusive or self"},
		{"", []string{"a", "b"}, 2, "usage"},
		{"", []string{"-nope"}, 2, "not defined"},
		{"a; 1\n", []string{"-o", "/nonexistent/dir/x.svg"}, 1, "no such file"},
	} {
		code, out, errs := xrayflame(t, c.stdin, c.args...)
		if code != c.code || !strings.Contains(errs, c.msg) || out != "" {
			t.Errorf("%q %v: exit %d, stdout %q, stderr %q; want exit %d and %q", c.stdin, c.args, code, out, errs, c.code, c.msg)
		}
	}
}
