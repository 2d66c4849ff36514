package asm

import _ "unsafe" // go:linkname

//go:linkname nanotime runtime.nanotime
func nanotime() int64
