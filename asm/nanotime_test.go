package asm

import (
	"time"
	_ "unsafe" // go:linkname
)

var epoch = time.Now()

func nanotimeForTest() int64 { return int64(time.Since(epoch)) }

//go:linkname nanotime runtime.nanotime
func nanotime() int64
