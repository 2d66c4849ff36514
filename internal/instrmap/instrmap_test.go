package instrmap

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// sample has every case the writer distinguishes: names with and without
// files, an unnamed id with a file, one without anything, a gap (id 6),
// shared and distinct directories, relative and root-level paths, line 0.
var sample = []Func{
	{ID: 1, Name: "main.main", File: "/src/app/main.go", Line: 10},
	{ID: 2, Name: "main.(*Server).Handle", File: "/src/app/server.go", Line: 42},
	{ID: 3, Name: "github.com/acme/cache.(*LRU[...]).Get", File: "/go/pkg/mod/github.com/acme/cache@v1.2.3/lru.go", Line: 7},
	{ID: 4, File: "/src/app/anon.go", Line: 5},
	{ID: 5, Name: "main.noFile"},
	{ID: 7, Name: "main.main.func1", File: "/src/app/main.go", Line: 20},
	{ID: 8, Name: "rel", File: "internal/x.go", Line: 3},
	{ID: 9, Name: "bare", File: "y.go", Line: 4},
	{ID: 10, Name: "root", File: "/z.go", Line: 0},
}

// sampleNames is the symbol name of every id of sample's map.
var sampleNames = []string{
	"main.main", "main.(*Server).Handle", "github.com/acme/cache.(*LRU[...]).Get",
	"#4", "main.noFile", "#6", "main.main.func1", "rel", "bare", "root",
}

func write(t testing.TB, funcs []Func) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := Write(&buf, funcs)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("Write returned %d, wrote %d bytes", n, buf.Len())
	}
	return buf.Bytes()
}

func open(t testing.TB, b []byte) *elf.File {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestELF(t *testing.T) {
	b := write(t, sample)
	f := open(t, b)
	if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB || f.Type != elf.ET_REL || f.Machine != elf.EM_X86_64 {
		t.Fatalf("header: %v %v %v %v", f.Class, f.Data, f.Type, f.Machine)
	}
	const n = 10
	want := []struct {
		name  string
		typ   elf.SectionType
		flags elf.SectionFlag
		size  uint64 // 0: not checked
	}{
		{".text", elf.SHT_NOBITS, elf.SHF_ALLOC | elf.SHF_EXECINSTR, 16 * (n + 1)},
		{"xray_instr_map", elf.SHT_PROGBITS, elf.SHF_ALLOC, 32 * n},
		{".debug_abbrev", elf.SHT_PROGBITS, 0, 0},
		{".debug_info", elf.SHT_PROGBITS, 0, 0},
		{".debug_line", elf.SHT_PROGBITS, 0, 0},
		{".symtab", elf.SHT_SYMTAB, 0, 24 * (n + 1)},
		{".strtab", elf.SHT_STRTAB, 0, 0},
		{".shstrtab", elf.SHT_STRTAB, 0, 0},
	}
	if len(f.Sections) != len(want)+1 {
		t.Fatalf("%d sections, want %d", len(f.Sections), len(want)+1)
	}
	for i, w := range want {
		s := f.Sections[i+1]
		if s.Name != w.name || s.Type != w.typ || s.Flags != w.flags || (w.size != 0 && s.Size != w.size) {
			t.Errorf("section %d: %s %v %v size %d, want %s %v %v size %d", i+1, s.Name, s.Type, s.Flags, s.Size, w.name, w.typ, w.flags, w.size)
		}
		if s.Type != elf.SHT_NOBITS && s.Offset+s.Size > uint64(len(b)) {
			t.Errorf("section %s runs past the end of the file", s.Name)
		}
		if s.Type == elf.SHT_REL || s.Type == elf.SHT_RELA {
			t.Errorf("relocation section %s", s.Name)
		}
	}
	if st := f.Section(".symtab"); st.Link != uint32(secStrtab) || st.Info != 1 || st.Entsize != 24 {
		t.Errorf(".symtab link %d info %d entsize %d", st.Link, st.Info, st.Entsize)
	}

	// One function-enter sled per id, at the id's fake address.
	m, err := f.Section("xray_instr_map").Data()
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= n; k++ {
		e := m[(k-1)*32 : k*32]
		sled, fn := binary.LittleEndian.Uint64(e), binary.LittleEndian.Uint64(e[8:])
		if sled != uint64(16*k) || fn != uint64(16*k) || e[16] != 0 || e[17] != 1 || e[18] != 0 || !allZero(e[19:]) {
			t.Errorf("entry %d: % x", k, e)
		}
	}

	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	if len(syms) != n {
		t.Fatalf("%d symbols, want %d", len(syms), n)
	}
	for i, s := range syms {
		k := uint64(i + 1)
		if s.Name != sampleNames[i] || elf.ST_BIND(s.Info) != elf.STB_GLOBAL || elf.ST_TYPE(s.Info) != elf.STT_FUNC ||
			s.Section != elf.SectionIndex(secText) || s.Value != 16*k || s.Size != 16 {
			t.Errorf("symbol %d: %+v", k, s)
		}
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func TestDWARF(t *testing.T) {
	f := open(t, write(t, sample))
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	r := d.Reader()
	cu, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if cu.Tag != dwarf.TagCompileUnit || cu.Children {
		t.Fatalf("first entry %v (children %v), want a childless compile unit", cu.Tag, cu.Children)
	}
	if lo, hi := cu.Val(dwarf.AttrLowpc), cu.Val(dwarf.AttrHighpc); lo != uint64(0) || hi != int64(16*11) {
		t.Errorf("unit range %v..+%v, want 0..+176", lo, hi)
	}
	if next, err := r.Next(); err != nil || next != nil {
		t.Errorf("more than one unit: %v, %v", next, err)
	}

	lr, err := d.LineReader(cu)
	if err != nil {
		t.Fatal(err)
	}
	type pos struct {
		file string
		line int
	}
	rows := map[uint64]pos{}
	var ends []uint64
	var e dwarf.LineEntry
	for {
		if err := lr.Next(&e); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if e.EndSequence {
			ends = append(ends, e.Address)
			continue
		}
		if _, dup := rows[e.Address]; dup {
			t.Errorf("two rows at %#x", e.Address)
		}
		rows[e.Address] = pos{e.File.Name, e.Line}
	}
	with := 0
	for _, fn := range sample {
		addr := uint64(fn.ID) * 16
		if fn.File == "" {
			if p, ok := rows[addr]; ok {
				t.Errorf("id %d has no file but a row %v", fn.ID, p)
			}
			lr.Reset()
			if err := lr.SeekPC(addr, &e); !errors.Is(err, dwarf.ErrUnknownPC) {
				t.Errorf("id %d has no file, SeekPC: %v %v:%d", fn.ID, err, e.File.Name, e.Line)
			}
			continue
		}
		with++
		if p := rows[addr]; p != (pos{fn.File, fn.Line}) {
			t.Errorf("id %d at %#x: %v, want %s:%d", fn.ID, addr, p, fn.File, fn.Line)
		}
		// An address inside the function resolves to it too.
		lr.Reset()
		if err := lr.SeekPC(addr+15, &e); err != nil || e.File.Name != fn.File || e.Line != fn.Line {
			t.Errorf("SeekPC(%#x): %v %v:%d", addr+15, err, e.File.Name, e.Line)
		}
	}
	if len(rows) != with {
		t.Errorf("%d rows, want %d", len(rows), with)
	}
	// Sequences: ids 1–3 (4 has a file too: 1–4), then 7–10; 5 and the gap
	// at 6 end the first one.
	if fmt.Sprint(ends) != "[80 176]" {
		t.Errorf("sequences end at %v, want [80 176]", ends)
	}
}

func TestNames(t *testing.T) {
	long := "a" + strings.Repeat("é\xff;", 50_000) + "日本"
	longWant := "a" + strings.Repeat("é?:", 50_000) + "日本"
	cases := []struct{ in, want string }{
		{"main.(*T).M-fm", "main.(*T).M-fm"},
		{"pkg/path.F[...]", "pkg/path.F[...]"},
		{"main.main.F[...].func2", "main.main.F[...].func2"},
		{"runtime·old", "runtime·old"},
		{"main.Grüße", "main.Grüße"},
		{"日本.関数", "日本.関数"},
		{"main.G[go.shape.struct { X int }]", "main.G[go.shape.struct { X int }]"},
		{"_ZN3foo3barEv", "_ZN3foo3barEv"},
		{"#42", "#42"},
		{"nul\x00tab\tnl\ndel\x7f", "nul?tab?nl?del?"},
		{`tag "json:\"x\""`, `tag 'json:/'x/''`},
		{"a;b", "a:b"},
		{"bad\xe3\x81utf8\xc0", "bad??utf8?"},
		{long, longWant},
	}
	var funcs []Func
	for i, c := range cases {
		funcs = append(funcs, Func{ID: uint32(i + 1), Name: c.in, File: "/d\x00ir/f\n.go", Line: 1})
	}
	f := open(t, write(t, funcs))
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		if syms[i].Name != c.want {
			t.Errorf("name %q: got %q, want %q", trunc(c.in), trunc(syms[i].Name), trunc(c.want))
		}
		if clean(c.in) != c.want {
			t.Errorf("clean(%q) = %q", trunc(c.in), trunc(clean(c.in)))
		}
	}
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	cu, _ := d.Reader().Next()
	lr, err := d.LineReader(cu)
	if err != nil {
		t.Fatal(err)
	}
	if files := lr.Files(); len(files) != 2 || files[1].Name != "/d?ir/f?.go" {
		t.Errorf("line table files %v, want [nil /d?ir/f?.go]", files)
	}
}

func trunc(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func TestEmpty(t *testing.T) {
	f := open(t, write(t, nil))
	if s := f.Section("xray_instr_map"); s == nil || s.Size != 0 {
		t.Fatalf("xray_instr_map: %+v", s)
	}
	if syms, err := f.Symbols(); err != nil || len(syms) != 0 {
		t.Fatalf("symbols %v, %v", syms, err)
	}
	if _, err := f.DWARF(); err != nil {
		t.Fatal(err)
	}
}

func TestGaps(t *testing.T) {
	// Only id 5 named: ids 1–4 are placeholders, in a map of 5 entries.
	f := open(t, write(t, []Func{{ID: 5, Name: "main.five", File: "/a.go", Line: 1}}))
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range syms {
		got = append(got, fmt.Sprintf("%s@%d", s.Name, s.Value))
	}
	if want := "#1@16 #2@32 #3@48 #4@64 main.five@80"; strings.Join(got, " ") != want {
		t.Errorf("symbols %s, want %s", strings.Join(got, " "), want)
	}
	if s := f.Section("xray_instr_map"); s.Size != 5*32 {
		t.Errorf("map size %d, want %d", s.Size, 5*32)
	}
}

func TestOrderErrors(t *testing.T) {
	for _, funcs := range [][]Func{
		{{ID: 0}},
		{{ID: 2}, {ID: 1}},
		{{ID: 1}, {ID: 1}},
		{{ID: 1}, {ID: MaxID + 1}},
	} {
		var buf bytes.Buffer
		n, err := Write(&buf, funcs)
		if !errors.Is(err, ErrOrder) || n != 0 || buf.Len() != 0 {
			t.Errorf("%v: n=%d err=%v, %d bytes written", funcs, n, err, buf.Len())
		}
	}
}

// failAfter accepts limit bytes, then fails.
type failAfter struct{ limit int }

var errFull = errors.New("disk full")

func (w *failAfter) Write(p []byte) (int, error) {
	if len(p) > w.limit {
		n := w.limit
		w.limit = 0
		return n, errFull
	}
	w.limit -= len(p)
	return len(p), nil
}

func TestWriteError(t *testing.T) {
	funcs := bigFuncs(10_000)
	for _, limit := range []int{0, 10, 100_000} {
		n, err := Write(&failAfter{limit}, funcs)
		if !errors.Is(err, errFull) || n != int64(limit) {
			t.Errorf("limit %d: n=%d err=%v", limit, n, err)
		}
	}
}

func TestDeterministic(t *testing.T) {
	funcs := bigFuncs(5_000)
	a, b := write(t, funcs), write(t, funcs)
	if !bytes.Equal(a, b) {
		t.Fatal("two writes of the same functions differ")
	}
}

// bigFuncs returns n functions shaped like a real program's: long names,
// a few hundred files in a few dozen directories, some without a file.
func bigFuncs(n int) []Func {
	funcs := make([]Func, n)
	for i := range funcs {
		id := i + 1
		funcs[i] = Func{
			ID:   uint32(id),
			Name: fmt.Sprintf("github.com/acme/service/internal/pkg%d.(*Type%d).Method%d", id/100, id%100, id),
			File: fmt.Sprintf("/home/user/src/service/internal/pkg%d/file%d.go", id/1000, id%7),
			Line: id % 3000,
		}
		if id%97 == 0 {
			funcs[i].File = ""
		}
	}
	return funcs
}

func TestBigReadBack(t *testing.T) {
	funcs := bigFuncs(100_000)
	f := open(t, write(t, funcs))
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	if len(syms) != len(funcs) {
		t.Fatalf("%d symbols, want %d", len(syms), len(funcs))
	}
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	cu, _ := d.Reader().Next()
	lr, err := d.LineReader(cu)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int{1, 50_000, 100_000} {
		fn := funcs[id-1]
		if s := syms[id-1]; s.Name != fn.Name || s.Value != uint64(16*id) {
			t.Errorf("symbol %d: %s@%d", id, s.Name, s.Value)
		}
		var e dwarf.LineEntry
		lr.Reset()
		if err := lr.SeekPC(uint64(16*id), &e); err != nil || e.File.Name != fn.File || e.Line != fn.Line {
			t.Errorf("id %d: %v %s:%d, want %s:%d", id, err, e.File.Name, e.Line, fn.File, fn.Line)
		}
	}
}

func BenchmarkWrite100k(b *testing.B) {
	funcs := bigFuncs(100_000)
	var n int64
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if n, err = Write(io.Discard, funcs); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(n)
	b.ReportMetric(float64(n), "file-bytes")
}

func TestEntryRoundTrip(t *testing.T) {
	e := Entry{Sled: 0x1122334455667788, Function: 0x99aabbccddeeff00, Kind: 4, AlwaysInstrument: 1, Version: 2}
	b := AppendEntry([]byte{0xee}, e)
	if len(b) != 1+EntrySize {
		t.Fatalf("AppendEntry wrote %d bytes, want %d", len(b)-1, EntrySize)
	}
	for _, c := range b[1+19:] {
		if c != 0 {
			t.Fatalf("padding %x is not zero", b[1+19:])
		}
	}
	if got := DecodeEntry(b[1:], binary.LittleEndian); got != e {
		t.Fatalf("DecodeEntry = %+v, want %+v", got, e)
	}
	if got := e.FunctionAddr(0x1000); got != 0x1000+8+e.Function {
		t.Fatalf("position-independent FunctionAddr = %#x", got)
	}
	e.Version = 0
	if got := e.FunctionAddr(0x1000); got != e.Function {
		t.Fatalf("absolute FunctionAddr = %#x", got)
	}
}
