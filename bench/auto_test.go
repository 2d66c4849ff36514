package bench

import (
	"testing"

	"github.com/goxray/xray"
	__xray "github.com/goxray/xray/xrayauto"
)

// Per-call cost of an automatically instrumented function (the code `goxray
// build` inserts, written out here in gofmt's layout: the split shape, the
// original body behind a test of the function's gate and a traced copy,
// with the id read from the file's table array; and the conditional
// shape), beside the same function instrumented by hand, left alone but
// not inlined, and left alone and inlined. (The default selection would
// leave a leaf this small alone: the compiler inlines it.)

var autoIDs = autoTable()

var autoGates [2]__xray.Gate

func autoTable() (ids [2]__xray.ID) {
	__xray.RegisterTable(ids[:], autoGates[:], "bench/auto_test.go", "github.com/goxray/xray/bench.autoLeaf\t27\ngithub.com/goxray/xray/bench.condLeaf\t40\n")
	return
}

func autoLeaf(a, b int) int {
	if autoGates[0].On() {
		return __xray_autoLeaf(a, b)
	}
	return a*b + a
}

func __xray_autoLeaf(a, b int) int {
	__xray.Enter(autoIDs[0])
	defer __xray.Exit(autoIDs[0])
	return a*b + a
}

func condLeaf(a, b int) int {
	if autoGates[1].On() {
		__xray.Enter(autoIDs[1])
		defer __xray.Exit(autoIDs[1])
	}
	return a*b + a
}

var handID = xray.Register("github.com/goxray/xray/bench.handLeaf")

func handLeaf(a, b int) int {
	xray.Enter(handID)
	defer xray.Exit(handID)
	return a*b + a
}

//go:noinline
func plainLeaf(a, b int) int { return a*b + a }

func inlinedLeaf(a, b int) int { return a*b + a }

var leafSink int

func BenchmarkLeafInlined(b *testing.B) {
	s := 0
	for i := 0; b.Loop(); i++ {
		s += inlinedLeaf(i, 3)
	}
	leafSink = s
}

func BenchmarkLeafPlain(b *testing.B) {
	s := 0
	for i := 0; b.Loop(); i++ {
		s += plainLeaf(i, 3)
	}
	leafSink = s
}

func BenchmarkLeafAutoOff(b *testing.B) {
	s := 0
	for i := 0; b.Loop(); i++ {
		s += autoLeaf(i, 3)
	}
	leafSink = s
}

func BenchmarkLeafCondOff(b *testing.B) {
	s := 0
	for i := 0; b.Loop(); i++ {
		s += condLeaf(i, 3)
	}
	leafSink = s
}

func BenchmarkLeafHandOff(b *testing.B) {
	s := 0
	for i := 0; b.Loop(); i++ {
		s += handLeaf(i, 3)
	}
	leafSink = s
}

func BenchmarkLeafAutoOn(b *testing.B) {
	start(b)
	s := 0
	for i := 0; b.Loop(); i++ {
		s += autoLeaf(i, 3)
	}
	leafSink = s
}

func BenchmarkLeafHandOn(b *testing.B) {
	start(b)
	s := 0
	for i := 0; b.Loop(); i++ {
		s += handLeaf(i, 3)
	}
	leafSink = s
}

// BenchmarkLeafAutoShed: tracing on, the function's gate closed (shed by
// the overhead governor, or unpatched as here): what the calls of a shed
// function cost, which should be the AutoOff row.
func BenchmarkLeafAutoShed(b *testing.B) {
	start(b)
	xray.Unpatch(autoIDs[0])
	defer xray.Patch(autoIDs[0])
	s := 0
	for i := 0; b.Loop(); i++ {
		s += autoLeaf(i, 3)
	}
	leafSink = s
}
