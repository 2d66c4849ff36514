package fdr

import "encoding/binary"

// DecodeHeader decodes the 32-byte file header and checks what llvm-xray
// checks for an FDR file: at least 32 bytes, type FileTypeFDR, version 1–5.
func DecodeHeader(data []byte) (Header, error) {
	if len(data) < HeaderSize {
		return Header{}, errorf(0, RuleHeaderSize, "file header needs %d bytes, input has %d", HeaderSize, len(data))
	}
	le := binary.LittleEndian
	flags := le.Uint32(data[4:])
	h := Header{
		Version:        le.Uint16(data),
		Type:           le.Uint16(data[2:]),
		ConstantTSC:    flags&1 != 0,
		NonstopTSC:     flags&2 != 0,
		CycleFrequency: le.Uint64(data[8:]),
		BufferSize:     le.Uint64(data[16:]),
	}
	if h.Type != FileTypeFDR {
		return h, errorf(2, RuleHeaderType, "file type %d, FDR files have type %d", h.Type, FileTypeFDR)
	}
	if h.Version < MinVersion || h.Version > MaxVersion {
		return h, errorf(0, RuleHeaderVersion, "FDR version %d, llvm-xray reads %d-%d", h.Version, MinVersion, MaxVersion)
	}
	return h, nil
}

// HeaderPrefixSize is how many bytes LooksLikeHeader needs: the version
// and type fields.
const HeaderPrefixSize = 4

// LooksLikeHeader reports whether b starts the header of an FDR file that
// llvm-xray reads: a version 1–5 and type FileTypeFDR in its first
// HeaderPrefixSize bytes. It tells a trace from other input (folded stacks,
// say) before the input is known to hold a whole header, so that a short
// trace still gets DecodeHeader's error rather than being read as
// something else.
func LooksLikeHeader(b []byte) bool {
	if len(b) < HeaderPrefixSize {
		return false
	}
	v, t := binary.LittleEndian.Uint16(b), binary.LittleEndian.Uint16(b[2:])
	return v >= MinVersion && v <= MaxVersion && t == FileTypeFDR
}
