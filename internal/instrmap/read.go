package instrmap

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strconv"
)

// Map gives function ids their names and source positions, from an ELF
// object with an xray_instr_map section: goxray's side file (trace.map) or
// a binary built with clang -fxray-instrument, exactly what llvm-xray takes
// as -instr_map.
//
// Ids are counted the way llvm-xray (and compiler-rt) count them: sleds in
// section order, the id starting at 1 and going up whenever a sled's
// function address differs from the previous sled's. Names come from the
// symbol table (the symbol containing the function address), positions
// from the DWARF line table (the row covering the address), printed by
// Location as llvm-xray's account does: "file:line:column" with the file's
// base name, "<invalid>:0:0" without a row, "(unknown)" for an id the map
// does not have. Unlike llvm-xray, names are not demangled.
type Map struct {
	Addr map[uint32]uint64 // id → function address
	name map[uint32]string
	loc  map[uint32]string
	src  map[uint32]srcPos
}

type srcPos struct {
	file string
	line int
}

// ReadMap reads the instrumentation map of the ELF object at path.
// Errors name the file and say what is wrong with it: missing, empty, not
// an ELF object, cut short, or without an xray_instr_map section.
func ReadMap(p string) (*Map, error) {
	o, err := os.Open(p)
	if err != nil {
		return nil, err // *PathError names the file
	}
	defer o.Close()
	size := int64(-1)
	if st, err := o.Stat(); err == nil {
		size = st.Size()
	}
	f, err := elf.NewFile(o)
	if err != nil {
		return nil, mapError(p, o, size, err)
	}
	return readMap(f, p)
}

// ParseMap reads an instrumentation map from r (see ReadMap); errors call
// it "map".
func ParseMap(r io.ReaderAt) (*Map, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		size := int64(-1)
		if s, ok := r.(interface{ Size() int64 }); ok {
			size = s.Size()
		}
		return nil, mapError("map", r, size, err)
	}
	return readMap(f, "map")
}

// mapError explains why debug/elf could not read p (size bytes, -1 if
// unknown) as an ELF object. It looks at the file itself rather than at
// err, whose form differs between Go versions: empty, not starting with
// the ELF magic, or shorter than the headers it declares.
func mapError(p string, r io.ReaderAt, size int64, err error) error {
	const what = "(goxray's TRACE.map or an -fxray-instrument binary)"
	if size == 0 {
		return fmt.Errorf("%s: empty file, not an instrumentation map %s", p, what)
	}
	var h [64]byte
	n, _ := r.ReadAt(h[:], 0)
	if !bytes.HasPrefix(h[:n], []byte(elf.ELFMAG)) && !bytes.HasPrefix([]byte(elf.ELFMAG), h[:n]) {
		return fmt.Errorf("%s: not an instrumentation map %s: it does not start as an ELF object", p, what)
	}
	if end := elfExtent(h[:n]); size >= 0 && (n < len(elf.ELFMAG) || end < 0 || end > size) {
		need := ""
		if end > 0 {
			need = fmt.Sprintf(", its headers say %d", end)
		}
		return fmt.Errorf("%s: truncated instrumentation map: the file has %d bytes%s", p, size, need)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s: truncated instrumentation map (%v)", p, err)
	}
	return fmt.Errorf("%s: not a readable instrumentation map %s: %v", p, what, err)
}

// elfExtent is where the ELF header h says its section header table ends:
// the least size of a whole file; -1 when h is too short to say.
func elfExtent(h []byte) int64 {
	if len(h) < 6 {
		return -1
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if elf.Data(h[5]) == elf.ELFDATA2MSB {
		bo = binary.BigEndian
	}
	switch elf.Class(h[4]) {
	case elf.ELFCLASS64:
		if len(h) < 64 {
			return -1
		}
		return int64(bo.Uint64(h[40:])) + int64(bo.Uint16(h[58:]))*int64(bo.Uint16(h[60:]))
	case elf.ELFCLASS32:
		if len(h) < 52 {
			return -1
		}
		return int64(bo.Uint32(h[32:])) + int64(bo.Uint16(h[46:]))*int64(bo.Uint16(h[48:]))
	}
	return -1
}

func readMap(f *elf.File, p string) (*Map, error) {
	sec := f.Section("xray_instr_map")
	if sec == nil {
		return nil, fmt.Errorf("%s: no xray_instr_map section (not built with -fxray-instrument, or not a goxray map)", p)
	}
	b, err := sec.Data()
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%s: truncated instrumentation map: the file ends inside its xray_instr_map section (%v)", p, err)
		}
		return nil, fmt.Errorf("%s: xray_instr_map: %v", p, err)
	}
	if len(b)%EntrySize != 0 {
		return nil, fmt.Errorf("%s: xray_instr_map is %d bytes, not a multiple of %d", p, len(b), EntrySize)
	}
	bo := f.ByteOrder
	m := &Map{Addr: map[uint32]uint64{}, name: map[uint32]string{}, loc: map[uint32]string{}, src: map[uint32]srcPos{}}
	id, cur := uint32(1), uint64(0)
	for i := 0; i < len(b); i += EntrySize {
		e := DecodeEntry(b[i:], bo)
		if e.Kind >= EntryKinds {
			// llvm-xray rejects the whole map too.
			return nil, fmt.Errorf("%s: sled %d has kind %d (llvm-xray knows 0-%d)", p, i/EntrySize, e.Kind, EntryKinds-1)
		}
		fn := e.FunctionAddr(sec.Addr + uint64(i))
		if cur == 0 {
			cur = fn
			m.Addr[id] = fn
		}
		if fn != cur {
			id++
			cur = fn
			m.Addr[id] = fn
		}
	}
	m.symbolize(f)
	return m, nil
}

func (m *Map) symbolize(f *elf.File) {
	syms, _ := f.Symbols()
	dyn, _ := f.DynamicSymbols()
	syms = append(syms, dyn...)
	funcs := syms[:0:0]
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF && s.Name != "" {
			funcs = append(funcs, s)
		}
	}
	sort.SliceStable(funcs, func(i, j int) bool { return funcs[i].Value < funcs[j].Value })
	lines := newLineIndex(f)
	for id, a := range m.Addr {
		i := sort.Search(len(funcs), func(i int) bool { return funcs[i].Value > a }) - 1
		if i >= 0 && (a < funcs[i].Value+funcs[i].Size || a == funcs[i].Value) {
			m.name[id] = funcs[i].Name
		}
		var sp srcPos
		m.loc[id], sp = lines.at(a)
		if sp.file != "" {
			m.src[id] = sp
		}
	}
}

// Name returns what llvm-xray prints for id: the symbol, "@(addr)" when the
// address has none, "#id" when the map does not have the id.
func (m *Map) Name(id uint32) string {
	if m != nil {
		if n, ok := m.name[id]; ok {
			return n
		}
		if a, ok := m.Addr[id]; ok {
			return "@(" + strconv.FormatUint(a, 16) + ")"
		}
	}
	return "#" + strconv.FormatInt(int64(int32(id)), 10)
}

// Location returns account's debug-info column for id.
func (m *Map) Location(id uint32) string {
	if m != nil {
		if l, ok := m.loc[id]; ok {
			return l
		}
	}
	return "(unknown)"
}

// lineIndex finds the line-table row covering an address.
type lineIndex struct {
	d    *dwarf.Data
	cus  []cuRange
	decl map[uint64]int // subprogram low_pc → DW_AT_decl_line
}

type cuRange struct {
	lo, hi uint64
	cu     *dwarf.Entry
}

func newLineIndex(f *elf.File) *lineIndex {
	d, err := f.DWARF()
	if err != nil {
		return &lineIndex{}
	}
	li := &lineIndex{d: d, decl: map[uint64]int{}}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag == dwarf.TagSubprogram {
			lo, ok1 := e.Val(dwarf.AttrLowpc).(uint64)
			line, ok2 := e.Val(dwarf.AttrDeclLine).(int64)
			if ok1 && ok2 {
				li.decl[lo] = int(line)
			}
			continue
		}
		if e.Tag == dwarf.TagCompileUnit {
			rs, err := d.Ranges(e)
			if err == nil {
				for _, rg := range rs {
					li.cus = append(li.cus, cuRange{rg[0], rg[1], e})
				}
			}
			continue // into the unit's subprograms
		}
		if e.Children {
			r.SkipChildren()
		}
	}
	return li
}

// line prefers a subprogram's declaration line when the row at its entry
// (where the XRay sled sits, before the prologue) says 0.
func (li *lineIndex) line(a uint64, row int) int {
	if row == 0 {
		if d, ok := li.decl[a]; ok {
			return d
		}
	}
	return row
}

// Source returns the file (as the line table names it) and line of id's
// entry, or "" and 0.
func (m *Map) Source(id uint32) (string, int) {
	if m == nil {
		return "", 0
	}
	sp := m.src[id]
	return sp.file, sp.line
}

func (li *lineIndex) at(a uint64) (string, srcPos) {
	const invalid = "<invalid>:0:0"
	for _, c := range li.cus {
		if a < c.lo || a >= c.hi {
			continue
		}
		lr, err := li.d.LineReader(c.cu)
		if err != nil || lr == nil {
			return invalid, srcPos{}
		}
		var e dwarf.LineEntry
		if err := lr.SeekPC(a, &e); err != nil {
			return invalid, srcPos{}
		}
		if e.File == nil {
			return invalid, srcPos{}
		}
		return path.Base(e.File.Name) + ":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column), srcPos{e.File.Name, li.line(a, e.Line)}
	}
	return invalid, srcPos{}
}
