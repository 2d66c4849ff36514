package analysis

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goxray/xray/internal/instrmap"
	"github.com/goxray/xray/internal/xraytool"
)

// account runs the Accountant over path like `goxray account`.
func account(t testing.TB, path, mapPath string, o AccountOptions, sortBy, order string, top int, csv bool) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var m *instrmap.Map
	if mapPath != "" {
		if m, err = instrmap.ReadMap(mapPath); err != nil {
			t.Fatal(err)
		}
	}
	a := NewAccountant(o)
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	rows := a.Rows(r.Header(), m)
	n := len(rows)
	rows, err = SortRows(rows, sortBy, order == "dsc", top)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if csv {
		err = WriteCSV(&b, rows)
	} else {
		err = WriteText(&b, rows, n)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestAccountMatchesLLVMXRay: byte-identical output to llvm-xray account
// ($LLVM_XRAY: make test runs it with llvm-xray 14 and 19) on files the
// goxray runtime wrote (no map: "(unknown): #id") and on a compiler-rt
// program's trace with the binary as map (names, file:line from DWARF),
// for every sort field, both orders, -top, csv, -d and
// -recursive-calls-only.
func TestAccountMatchesLLVMXRay(t *testing.T) {
	bin := xraytool.Bin(t)
	type input struct{ trace, imap string }
	var inputs []input
	for _, p := range testdata(t) {
		if strings.Contains(filepath.Base(p), "runtime-") {
			inputs = append(inputs, input{p, ""})
		}
	}
	cb, ct := crtTrace(t)
	inputs = append(inputs, input{ct, cb})
	for _, in := range inputs {
		for _, field := range SortFields {
			for _, order := range []string{"asc", "dsc"} {
				for _, v := range []struct {
					o    AccountOptions
					top  int
					csv  bool
					args []string
				}{
					{top: -1},
					{top: 2, args: []string{"-top=2"}},
					{csv: true, top: -1, args: []string{"-format=csv"}},
					{o: AccountOptions{DeduceSiblingCalls: true}, top: -1, args: []string{"-d"}},
					{o: AccountOptions{RecursiveOnly: true}, top: -1, args: []string{"-recursive-calls-only"}},
				} {
					if (v.args != nil) != (field == "sum" && order == "dsc") {
						continue // flags with one sort; every sort plain
					}
					args := []string{"account", "-sort=" + field, "-sortorder=" + order}
					if in.imap != "" {
						args = append(args, "-instr_map="+in.imap)
					}
					args = append(append(args, v.args...), in.trace)
					want, err := xraytool.Run(bin, args...)
					if err != nil {
						t.Fatal(err)
					}
					got := account(t, in.trace, in.imap, v.o, field, order, v.top, v.csv)
					if field != "funcid" {
						// llvm-xray's order among equal keys is unspecified.
						want, got = sortLines(want), sortLines(got)
					}
					if got != want {
						t.Fatalf("%v\n--- llvm-xray:\n%s--- goxray:\n%s", args, want, got)
					}
				}
			}
		}
	}
	// The compiler-rt program's functions have names and lines.
	out := account(t, ct, cb, AccountOptions{}, "funcid", "asc", -1, false)
	for _, want := range []string{"crt.c:", ": leaf", ": mid", ": rec", ": top"} {
		if !strings.Contains(out, want) {
			t.Errorf("account of the compiler-rt trace lacks %q:\n%s", want, out)
		}
	}
}

func sortLines(s string) string {
	lines := strings.Split(s, "\n")
	// Keep the header lines in place.
	h := 2
	if strings.HasPrefix(s, "funcid,") {
		h = 1
	}
	if len(lines) > h {
		body := lines[h:]
		slices.Sort(body)
	}
	return strings.Join(lines, "\n")
}

// TestOrderStat: quickselect agrees with sorting, on adversarial inputs too.
func TestOrderStat(t *testing.T) {
	inputs := [][]uint64{{5}, {2, 1}, {3, 3, 3, 3}, {1, 2, 3, 4, 5, 6, 7}, {7, 6, 5, 4, 3, 2, 1}}
	r := uint64(1)
	var big []uint64
	for range 5000 {
		r = r*6364136223846793005 + 1442695040888963407
		big = append(big, r>>50)
	}
	inputs = append(inputs, big)
	for _, in := range inputs {
		sorted := slices.Clone(in)
		slices.Sort(sorted)
		for _, k := range []int{0, len(in) / 2, len(in) * 9 / 10, len(in) - 1} {
			v := slices.Clone(in)
			if got := orderStat(v, k); got != sorted[k] {
				t.Fatalf("orderStat(%d of %d) = %d, want %d", k, len(in), got, sorted[k])
			}
		}
	}
	var l latencies
	for i := range 200000 {
		l.add(uint64((i * 7919) % 100003))
	}
	l.add(1 << 40)
	st := l.order()
	if st[0] != 0 || st[4] != 1<<40 || l.n != 200001 {
		t.Fatalf("stats %v n %d", st, l.n)
	}
}
