package asm

import (
	"runtime"
	"unsafe"
)

// goidSlow parses the id from runtime.Stack's first line. Its argument is
// ignored; it exists so that its frame matches GoidAt's, which tail-calls it.
//
// runtime.Stack stores its buffer in the system goroutine (g0.writebuf)
// while it formats, so escape analysis moves any buffer passed to it to the
// heap: one allocation per call. The buffer here is a stack array whose
// address is passed through unsafe.Add, which escape analysis does not
// follow. That is safe because runtime.Stack writes synchronously on the
// system stack and clears g0.writebuf before it returns, the goroutine's
// stack cannot move while it runs on the system stack, and if the stack
// grows before that, the copier fixes every pointer into the stack anyway
// (it adjusts by address, not by escape analysis). The garbage collector
// ignores pointers into stacks.
func goidSlow(_ uintptr) uint64 {
	var buf [64]byte // "goroutine 18446744073709551615 [" is 32 bytes
	p := (*[64]byte)(unsafe.Add(nil, uintptr(unsafe.Pointer(&buf))))
	n := runtime.Stack(p[:], false)
	return parseGoid(buf[:n])
}

// parseGoid returns the number after "goroutine " at the start of b, or 0.
// The header may carry more after the number (GOTRACEBACK=system prints
// "gp=… m=…"), so parsing stops at the first non-digit.
func parseGoid(b []byte) uint64 {
	const prefix = "goroutine "
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return 0
	}
	var id uint64
	digits := 0
	for _, c := range b[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
		digits++
	}
	if digits == 0 || digits > 20 {
		return 0
	}
	return id
}
