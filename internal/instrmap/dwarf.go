package instrmap

import (
	"encoding/binary"
	"strings"
)

// DWARF 4, 32-bit format, 8-byte addresses. Version 4 because both
// llvm-xray 14 and 19 (and Go's debug/dwarf) read it and its line-table
// header is plain strings, unlike version 5's self-describing entry formats.
const (
	dwarfVersion = 4

	dwTagCompileUnit = 0x11
	dwChildrenNo     = 0
	dwAtName         = 0x03
	dwAtStmtList     = 0x10
	dwAtLowPC        = 0x11
	dwAtHighPC       = 0x12
	dwAtLanguage     = 0x13
	dwAtProducer     = 0x25
	dwFormAddr       = 0x01
	dwFormData2      = 0x05
	dwFormData8      = 0x07
	dwFormString     = 0x08
	dwFormSecOffset  = 0x17
	dwLangGo         = 0x16

	dwLnsCopy        = 0x01
	dwLnsAdvancePC   = 0x02
	dwLnsAdvanceLine = 0x03
	dwLnsSetFile     = 0x04
	dwLneEndSequence = 0x01
	dwLneSetAddress  = 0x02

	lineBase   = -5
	lineRange  = 14
	opcodeBase = 13
)

// producer names the writer in the compile unit, for whoever dumps the map.
const producer = "goxray instrmap"

// debugAbbrev holds the single abbreviation: a compile unit without
// children whose attributes are those debugInfo writes, in that order.
func debugAbbrev() []byte {
	return []byte{
		1, dwTagCompileUnit, dwChildrenNo,
		dwAtProducer, dwFormString,
		dwAtLanguage, dwFormData2,
		dwAtName, dwFormString,
		dwAtStmtList, dwFormSecOffset,
		dwAtLowPC, dwFormAddr,
		dwAtHighPC, dwFormData8, // a length in DWARF ≥ 4
		0, 0, // end of attributes
		0, // end of abbreviations
	}
}

// debugInfo is one compile unit covering the whole fake code section and
// pointing at the line table at offset 0 of .debug_line. LLVM's symbolizer
// finds line tables only through a compile unit whose address range holds
// the address, so the line table alone is not enough.
func debugInfo(textSize uint64) []byte {
	b := make([]byte, 4, 64) // unit length, filled in below
	b = binary.LittleEndian.AppendUint16(b, dwarfVersion)
	b = binary.LittleEndian.AppendUint32(b, 0) // abbreviations at offset 0
	b = append(b, 8)                           // address size
	b = append(b, 1)                           // abbreviation code
	b = append(b, producer...)
	b = append(b, 0)
	b = binary.LittleEndian.AppendUint16(b, dwLangGo)
	b = append(b, "goxray"...)
	b = append(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 0) // stmt_list: .debug_line offset 0
	b = binary.LittleEndian.AppendUint64(b, 0) // low_pc
	b = binary.LittleEndian.AppendUint64(b, textSize)
	binary.LittleEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// debugLine is the line table: one row per function that has a file, at the
// function's fake address. A run of consecutive ids with files is one
// sequence; a function without a file ends the sequence, so no row covers
// its address and it shows no position rather than its predecessor's.
func debugLine(funcs []Func) []byte {
	// File table: directories and file names deduplicated, each path split
	// at its last slash (Go reports slash-separated paths on every OS).
	dirs := map[string]uint64{}
	files := map[string]uint64{}
	var dirList []string
	type fileEntry struct {
		name string
		dir  uint64
	}
	var fileList []fileEntry
	fileOf := make([]uint64, len(funcs)) // 0 = no file
	for i, f := range funcs {
		if f.File == "" {
			continue
		}
		idx, ok := files[f.File]
		if !ok {
			dir, base := "", f.File
			if k := strings.LastIndexByte(f.File, '/'); k >= 0 {
				dir, base = f.File[:k], f.File[k+1:]
				if dir == "" {
					dir = "/"
				}
			}
			var di uint64 // 0: the compilation directory, which is unset
			if dir != "" {
				if di, ok = dirs[dir]; !ok {
					dirList = append(dirList, dir)
					di = uint64(len(dirList))
					dirs[dir] = di
				}
			}
			fileList = append(fileList, fileEntry{clean(base), di})
			idx = uint64(len(fileList))
			files[f.File] = idx
		}
		fileOf[i] = idx
	}

	b := make([]byte, 0, 64+len(funcs)*8)
	b = append(b, 0, 0, 0, 0) // unit length
	b = binary.LittleEndian.AppendUint16(b, dwarfVersion)
	b = append(b, 0, 0, 0, 0) // header length
	hdrStart := len(b)
	b = append(b,
		1,            // minimum instruction length
		1,            // maximum operations per instruction
		1,            // default is_stmt
		lineBase+256, // as a signed byte
		lineRange,
		opcodeBase,
		0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, // operand counts of standard opcodes 1..12
	)
	for _, d := range dirList {
		b = append(b, clean(d)...)
		b = append(b, 0)
	}
	b = append(b, 0)
	for _, f := range fileList {
		b = append(b, f.name...)
		b = append(b, 0)
		b = binary.AppendUvarint(b, f.dir)
		b = append(b, 0, 0) // modification time, length: unknown
	}
	b = append(b, 0)
	binary.LittleEndian.PutUint32(b[6:], uint32(len(b)-hdrStart))

	// The program. Registers after DW_LNE_set_address: file 1, line 1.
	// Unsigned operands are ULEB128, which is exactly what
	// binary.AppendUvarint writes; slot (16) fits one ULEB128 byte.
	inSeq := false
	var addr uint64
	var file uint64
	var line int64
	end := func() {
		b = append(b, dwLnsAdvancePC, slot) // to the end of the last function
		b = append(b, 0, 1, dwLneEndSequence)
		inSeq = false
	}
	for i, f := range funcs {
		if fileOf[i] == 0 {
			if inSeq {
				end()
			}
			continue
		}
		a := uint64(f.ID) * slot
		if inSeq && a != addr+slot {
			end() // a gap in the ids: its placeholders have no position
		}
		if !inSeq {
			b = append(b, 0, 9, dwLneSetAddress)
			b = binary.LittleEndian.AppendUint64(b, a)
			addr, file, line, inSeq = a, 1, 1, true
		} else {
			b = append(b, dwLnsAdvancePC, slot) // the next id, one slot on
			addr = a
		}
		if fileOf[i] != file {
			file = fileOf[i]
			b = append(b, dwLnsSetFile)
			b = binary.AppendUvarint(b, file)
		}
		l := int64(max(f.Line, 0))
		if l != line {
			b = append(b, dwLnsAdvanceLine)
			b = appendSLEB(b, l-line)
			line = l
		}
		b = append(b, dwLnsCopy)
	}
	if inSeq {
		end()
	}
	binary.LittleEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// appendSLEB appends v as a signed LEB128 number (DWARF's encoding, which
// is not Go's zig-zag varint).
func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
