package asm

import "time"

var epoch = time.Now()

func nanotimeForTest() int64 { return int64(time.Since(epoch)) }
