package runtime

import (
	"testing"

	"github.com/goxray/xray/runtime/tsc"
)

var benchSink uint64

// BenchmarkRecordByClock measures, for each clock this CPU advertises, two
// clock reads ("clock") and one Enter+Exit pair ("enterexit") in one run:
// the difference is what the record path adds to the clock, two records'
// worth (the target: at most 10 ns per record over the clock read), and
// the same pair on the Go path ("enterexit-go") for comparison.
func BenchmarkRecordByClock(b *testing.B) {
	for _, src := range tsc.Advertised() {
		b.Run(src+"/clock", func(b *testing.B) {
			defer tsc.UseForTest(src)()
			var s uint64
			for b.Loop() {
				t0, _ := tsc.Now()
				t1, _ := tsc.Now()
				s += t0 + t1
			}
			benchSink = s
		})
		b.Run(src+"/enterexit", func(b *testing.B) {
			defer tsc.UseForTest(src)()
			startT(b, config(b))
			for b.Loop() {
				Enter(1)
				Exit(1)
			}
			b.StopTimer()
			if st := ReadStats(); st.Records == 0 {
				b.Fatal("nothing recorded")
			}
			b.Logf("%s: %s", src, ReadStats().RecordPath)
		})
		b.Run(src+"/enterexit-go", func(b *testing.B) {
			defer tsc.UseForTest(src)()
			startT(b, config(b))
			setFast(writers.Load(), false)
			for b.Loop() {
				Enter(1)
				Exit(1)
			}
		})
	}
}
