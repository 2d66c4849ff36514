package instrmap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/goxray/xray/fdr"
)

// Func is one function of the map.
type Func struct {
	// ID is the function id the trace records carry (1-based). Entry k of
	// the map is id k, so Write needs IDs in increasing order; gaps are
	// filled with placeholder entries.
	ID uint32
	// Name is the symbol name llvm-xray prints. It is written byte for
	// byte except for the few bytes that break llvm-xray's output, which
	// are replaced one for one (see the package documentation). Empty
	// means "no name": the entry gets the placeholder "#<id>", which is
	// how llvm-xray shows ids it has no entry for.
	Name string
	// File is the source path ("" for none) and Line its line; together
	// they become one row of the line table. Lines below 0 are written as 0.
	File string
	Line int
}

// MaxID is the largest id Write accepts: the largest id a function record
// of an FDR trace can carry (28 bits).
const MaxID = fdr.MaxFuncID

// Layout of the fake code section. Function id k lives at address k*slot,
// so address 0 (which confuses llvm-xray's id numbering) is never used and
// the address of an id is a multiplication.
const slot = 16

// ELF constants used below (values from the ELF-64 specification).
const (
	etRel       = 1
	emX86_64    = 62
	shtProgbits = 1
	shtSymtab   = 2
	shtStrtab   = 3
	shtNobits   = 8
	shfAlloc    = 0x2
	shfExec     = 0x4
	stbGlobal   = 1
	sttFunc     = 2

	ehdrSize = 64
	shdrSize = 64
	symSize  = 24
)

// Section indices, in the order the section header table lists them.
const (
	secNull = iota
	secText
	secMap
	secAbbrev
	secInfo
	secLine
	secSymtab
	secStrtab
	secShstrtab
	numSections
)

var sectionNames = [numSections]string{
	"", ".text", "xray_instr_map", ".debug_abbrev", ".debug_info", ".debug_line",
	".symtab", ".strtab", ".shstrtab",
}

// ErrOrder is returned (wrapped) when funcs are not in strictly increasing
// id order, or an id is 0 or above MaxID.
var ErrOrder = errors.New("instrmap: function ids must be strictly increasing, from 1 to MaxID")

// Write writes the instrumentation map of funcs to w and returns the number
// of bytes written. funcs must be sorted by strictly increasing ID (each
// in 1..MaxID); the map holds one entry per id from 1 to the last ID, so a
// trace's ids line up with llvm-xray's 1-based entry numbering, and ids
// missing from funcs get the "#<id>" placeholder. With no funcs the map has
// no entries, which llvm-xray accepts (every id then shows as "#<id>").
//
// Write validates funcs before writing anything, then streams the file
// through a fixed-size buffer; besides that buffer it keeps the line table
// (a few bytes per function with a file) in memory.
func Write(w io.Writer, funcs []Func) (int64, error) {
	var n uint32 // number of map entries = the largest id
	for i, f := range funcs {
		if f.ID == 0 || f.ID > MaxID || f.ID <= n {
			return 0, fmt.Errorf("%w: funcs[%d].ID = %d after %d", ErrOrder, i, f.ID, n)
		}
		n = f.ID
	}

	// The string table: a leading NUL, then each entry's name and NUL.
	strSize := uint64(1)
	next := uint32(1)
	for _, f := range funcs {
		strSize += uint64(nameLen(f)) + 1
		strSize += uint64(placeholderLen(next, f.ID)) // gap entries before f
		next = f.ID + 1
	}

	line := debugLine(funcs)
	if strSize > math.MaxUint32 || uint64(len(line)) > math.MaxUint32 {
		// ELF string offsets and the DWARF-32 line table are 32-bit.
		return 0, errors.New("instrmap: names or file paths exceed 4 GiB")
	}
	abbrev := debugAbbrev()
	textSize := uint64(n+1) * slot
	info := debugInfo(textSize)
	shstr, shnames := shstrtab()

	// File layout: header, then the sections in index order (the NOBITS
	// section takes no bytes), 8-byte aligned where the entries are 8-byte
	// words, then the section header table.
	var sh [numSections]shdr
	off := uint64(ehdrSize)
	place := func(i int, typ uint32, flags, size, align, entsize uint64) {
		off = alignUp(off, align)
		sh[i] = shdr{name: shnames[i], typ: typ, flags: flags, off: off, size: size, align: align, entsize: entsize}
		if typ != shtNobits {
			off += size
		}
	}
	place(secText, shtNobits, shfAlloc|shfExec, textSize, slot, 0)
	place(secMap, shtProgbits, shfAlloc, uint64(n)*EntrySize, 8, 0)
	place(secAbbrev, shtProgbits, 0, uint64(len(abbrev)), 1, 0)
	place(secInfo, shtProgbits, 0, uint64(len(info)), 1, 0)
	place(secLine, shtProgbits, 0, uint64(len(line)), 1, 0)
	place(secSymtab, shtSymtab, 0, uint64(n+1)*symSize, 8, symSize)
	place(secStrtab, shtStrtab, 0, strSize, 1, 0)
	place(secShstrtab, shtStrtab, 0, uint64(len(shstr)), 1, 0)
	sh[secSymtab].link = secStrtab
	sh[secSymtab].info = 1 // index of the first global symbol: all but the null one
	shoff := alignUp(off, 8)

	s := &sink{w: w, buf: make([]byte, 0, 64<<10)}

	// ELF header.
	s.bytes([]byte{0x7f, 'E', 'L', 'F', 2 /* 64-bit */, 1 /* little-endian */, 1 /* version */, 0 /* System V ABI */})
	s.zeros(8)
	s.u16(etRel)
	s.u16(emX86_64)
	s.u32(1) // version
	s.u64(0) // entry
	s.u64(0) // program headers: none
	s.u64(shoff)
	s.u32(0) // flags
	s.u16(ehdrSize)
	s.u16(0) // program header entry size
	s.u16(0) // program header count
	s.u16(shdrSize)
	s.u16(numSections)
	s.u16(secShstrtab)

	// xray_instr_map: for each id, a version-0 sled with absolute
	// addresses (so no relocations), kind 0 (function-enter; never ≥ 5,
	// which makes llvm-xray reject the whole map), always-instrument 1.
	s.pad(sh[secMap].off)
	var entry [EntrySize]byte
	for id := uint32(1); id <= n; id++ {
		addr := uint64(id) * slot
		s.bytes(AppendEntry(entry[:0], Entry{Sled: addr, Function: addr, Kind: 0, AlwaysInstrument: 1, Version: 0}))
	}

	s.pad(sh[secAbbrev].off)
	s.bytes(abbrev)
	s.pad(sh[secInfo].off)
	s.bytes(info)
	s.pad(sh[secLine].off)
	s.bytes(line)

	// .symtab: the null symbol, then one GLOBAL FUNC symbol per id, defined
	// in the NOBITS section (the symbolizer ignores absolute symbols).
	s.pad(sh[secSymtab].off)
	s.zeros(symSize)
	name := uint32(1)
	sym := func(id uint32, nlen int) {
		s.u32(name)
		s.u8(stbGlobal<<4 | sttFunc)
		s.u8(0) // default visibility
		s.u16(secText)
		s.u64(uint64(id) * slot)
		s.u64(slot)
		name += uint32(nlen) + 1
	}
	next = 1
	for _, f := range funcs {
		for ; next < f.ID; next++ {
			sym(next, decimalLen(next)+1)
		}
		sym(f.ID, nameLen(f))
		next++
	}

	// .strtab, in the same order as the symbols.
	s.pad(sh[secStrtab].off)
	s.u8(0)
	next = 1
	for _, f := range funcs {
		for ; next < f.ID; next++ {
			s.placeholder(next)
		}
		if f.Name == "" {
			s.placeholder(f.ID)
		} else {
			s.name(f.Name)
		}
		next++
	}

	s.pad(sh[secShstrtab].off)
	s.bytes(shstr)

	s.pad(shoff)
	for _, h := range sh {
		s.u32(h.name)
		s.u32(h.typ)
		s.u64(h.flags)
		s.u64(0) // address: sections of a relocatable object start at 0
		s.u64(h.off)
		s.u64(h.size)
		s.u32(h.link)
		s.u32(h.info)
		s.u64(h.align)
		s.u64(h.entsize)
	}
	s.flush()
	return s.n, s.err
}

type shdr struct {
	name, typ, link, info            uint32
	flags, off, size, align, entsize uint64
}

func alignUp(v, a uint64) uint64 {
	if a <= 1 {
		return v
	}
	return (v + a - 1) &^ (a - 1)
}

// nameLen is the length of f's name in the string table.
func nameLen(f Func) int {
	if f.Name == "" {
		return decimalLen(f.ID) + 1
	}
	return len(f.Name)
}

// placeholderLen is the string-table size of the placeholders for ids
// from..to-1 (each "#<id>" and its NUL).
func placeholderLen(from, to uint32) int {
	total := 0
	for id := from; id < to; id++ {
		total += decimalLen(id) + 2
	}
	return total
}

func decimalLen(v uint32) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

func shstrtab() ([]byte, [numSections]uint32) {
	var idx [numSections]uint32
	b := []byte{0}
	for i, s := range sectionNames {
		if s == "" {
			continue
		}
		idx[i] = uint32(len(b))
		b = append(b, s...)
		b = append(b, 0)
	}
	return b, idx
}

// sink streams little-endian values to w through buf, remembering the
// first error and counting the bytes written.
type sink struct {
	w   io.Writer
	buf []byte
	n   int64 // bytes handed to w
	err error
}

func (s *sink) room(k int) {
	if len(s.buf)+k > cap(s.buf) {
		s.flush()
	}
}

func (s *sink) flush() {
	if s.err == nil && len(s.buf) > 0 {
		m, err := s.w.Write(s.buf)
		s.n += int64(m)
		s.err = err
	}
	s.buf = s.buf[:0]
}

// off is the file offset of the next byte.
func (s *sink) off() uint64 { return uint64(s.n) + uint64(len(s.buf)) }

// pad writes zeros up to file offset to.
func (s *sink) pad(to uint64) { s.zeros(int(to - s.off())) }

func (s *sink) zeros(k int) {
	for k > 0 {
		s.room(1)
		c := min(k, cap(s.buf)-len(s.buf))
		s.buf = append(s.buf, make([]byte, c)...)
		k -= c
	}
}

func (s *sink) bytes(b []byte) {
	for len(b) > 0 {
		s.room(1)
		c := min(len(b), cap(s.buf)-len(s.buf))
		s.buf = append(s.buf, b[:c]...)
		b = b[c:]
	}
}

func (s *sink) u8(v uint8)   { s.room(1); s.buf = append(s.buf, v) }
func (s *sink) u16(v uint16) { s.room(2); s.buf = binary.LittleEndian.AppendUint16(s.buf, v) }
func (s *sink) u32(v uint32) { s.room(4); s.buf = binary.LittleEndian.AppendUint32(s.buf, v) }
func (s *sink) u64(v uint64) { s.room(8); s.buf = binary.LittleEndian.AppendUint64(s.buf, v) }

// name writes a symbol name, cleaned (see clean), and its NUL.
func (s *sink) name(n string) {
	for len(n) > 0 {
		s.room(utf8.UTFMax)
		c := min(len(n), cap(s.buf)-len(s.buf))
		// Cut at a rune boundary so clean sees whole runes; backing off
		// at most UTFMax-1 bytes finds the start of a valid one, and
		// invalid bytes are replaced one by one wherever the cut falls.
		for k := 1; k < utf8.UTFMax && c < len(n) && !utf8.RuneStart(n[c]); k++ {
			c--
		}
		s.buf = appendClean(s.buf, n[:c])
		n = n[c:]
	}
	s.u8(0)
}

// placeholder writes "#<id>" and its NUL.
func (s *sink) placeholder(id uint32) {
	s.room(12)
	s.buf = append(s.buf, '#')
	s.buf = strconv.AppendUint(s.buf, uint64(id), 10)
	s.buf = append(s.buf, 0)
}

// appendClean appends s with every byte that would break one of
// llvm-xray's outputs replaced by one byte, so the length never changes.
// llvm-xray writes names without escaping into line-oriented text
// (account, stack), JSON (convert -output-format=trace_event) and DOT
// (graph). So control bytes (NUL also ends an ELF string) and bytes that
// are not UTF-8 become '?', a double quote becomes a single quote, a
// backslash becomes '/', and ';' (the frame separator of
// `stack -stack-format=flame`) becomes ':'.
func appendClean(dst []byte, s string) []byte {
	start := len(dst)
	dst = append(dst, s...)
	for i := start; i < len(dst); {
		c := dst[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(dst[i:])
			if r == utf8.RuneError && size == 1 {
				dst[i] = '?'
			}
			i += size
			continue
		}
		switch {
		case c < 0x20 || c == 0x7f:
			dst[i] = '?'
		case c == '"':
			dst[i] = '\''
		case c == '\\':
			dst[i] = '/'
		case c == ';':
			dst[i] = ':'
		}
		i++
	}
	return dst
}

// clean is appendClean for a string.
func clean(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == ';' {
			return string(appendClean(nil, s))
		}
	}
	return s
}
