package bench

import (
	"testing"

	__xray "github.com/goxray/xray"
)

// Per-call cost of an automatically instrumented function (the code `goxray
// build` inserts, written out here in gofmt's layout: the same statements
// the rewriter puts on the line of the opening brace, with the id read
// from the file's table array), beside the same function instrumented by
// hand, left alone but not inlined, and left alone and inlined.

var autoIDs = autoTable()

func autoTable() (ids [1]__xray.ID) {
	__xray.RegisterTable(ids[:], "bench/auto_test.go", "github.com/goxray/xray/bench.autoLeaf\t27\n")
	return
}

func autoLeaf(a, b int) int {
	__xray.Enter(autoIDs[0])
	defer __xray.Exit(autoIDs[0])
	return a*b + a
}

var handID = __xray.Register("github.com/goxray/xray/bench.handLeaf")

func handLeaf(a, b int) int {
	__xray.Enter(handID)
	defer __xray.Exit(handID)
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
