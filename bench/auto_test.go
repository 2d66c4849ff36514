package bench

import (
	"math"
	"testing"
	"time"

	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/tsc"
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

// BenchmarkLeafStretches: the Leaf rows in one loop that alternates
// stretches of 1000 calls of each and keeps the fastest stretch of each
// (see BenchmarkRecursiveOffRatio for why): "off" with tracing off, and
// per clock with a session recording on that clock (the record path's
// clocks other than nanotime), where auto and hand are the traced calls.
// Metrics are ns per call.
func BenchmarkLeafStretches(b *testing.B) {
	type row struct {
		name string
		f    func(int) int
	}
	run := func(b *testing.B, rows []row) {
		best := make([]time.Duration, len(rows))
		for i := range best {
			best[i] = math.MaxInt64
		}
		s := 0
		for b.Loop() {
			for i, r := range rows {
				t0 := time.Now()
				for j := range 1000 {
					s += r.f(j)
				}
				best[i] = min(best[i], time.Since(t0))
			}
		}
		leafSink = s
		for i, r := range rows {
			b.ReportMetric(float64(best[i])/1000, r.name+"-ns")
		}
	}
	plain := row{"plain", func(i int) int { return plainLeaf(i, 3) }}
	b.Run("off", func(b *testing.B) {
		run(b, []row{plain,
			{"inlined", func(i int) int { return inlinedLeaf(i, 3) }},
			{"auto", func(i int) int { return autoLeaf(i, 3) }},
			{"cond", func(i int) int { return condLeaf(i, 3) }},
			{"hand", func(i int) int { return handLeaf(i, 3) }},
		})
	})
	for _, src := range tsc.Advertised() {
		if src == tsc.Nanotime || src == tsc.LfenceRDTSCPID {
			continue
		}
		b.Run(src, func(b *testing.B) {
			b.Cleanup(tsc.UseForTest(src))
			start(b)
			run(b, []row{plain,
				{"auto", func(i int) int { return autoLeaf(i, 3) }},
				{"hand", func(i int) int { return handLeaf(i, 3) }},
			})
		})
	}
}
