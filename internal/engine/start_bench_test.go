package engine

import (
	"strconv"
	"testing"
)

// BenchmarkStart times a session's Start, by arena size (Stop, untimed,
// follows each): Start maps and commits the arena, which takes time in
// proportion to its size, and times a record on a scratch set
// (estimateRecordCost), which is most of a small arena's Start.
func BenchmarkStart(b *testing.B) {
	for _, mib := range []int{4, 64, 256, 1024} {
		b.Run("arena="+strconv.Itoa(mib)+"MiB", func(b *testing.B) {
			c := config(b)
			c.BufferCount = mib * (1 << 20) / c.BufferSize
			for range b.N {
				if err := Start(c); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := Stop(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
