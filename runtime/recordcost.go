package runtime

import (
	goruntime "runtime"
	"sync/atomic"
	"time"

	"github.com/goxray/xray/runtime/glayout"
)

// What one record costs the program beyond its clock and goroutine id
// reads, in ns: the rest of the record path, and in automatically
// instrumented code the traced copy's call and deferred Exit, per record.
// Measured on the machines make bench ran on (bench/README.md: the
// Enter+Exit row over its floor of two clock reads, and the LeafAutoOn
// row over LeafHandOn); the Go path (race detector, purego, other
// architectures, MinDuration, test clocks) takes about 10 ns more than
// the assembly one.
const (
	recordWorkAsm = 6
	recordWorkGo  = 16
)

// estimateRecordCost is the overhead governor's estimate of one record's
// cost in ns: a read of the session's clock and of the goroutine id, timed
// here (the fastest of a few rounds, so that a preempted round does not
// count), plus the work around them. These are what differ most between
// machines and builds: a fenced TSC read costs 8–25 ns, a virtualized
// clock_gettime 50 or more, and the goroutine id a load where the g
// pointer can be read but a microsecond or more where it comes from
// runtime.Stack (purego, architectures without a g reader).
func estimateRecordCost(_ *session) float64 {
	fast := atomic.LoadUint32(&fastOK) != modeOff
	const reads, rounds = 256, 8
	best := time.Duration(1 << 62)
	var ids uint64
	for range rounds {
		t0 := time.Now()
		for range reads {
			now() // a call the compiler cannot drop: assembly, or a hook
			ids += glayout.Goid()
		}
		best = min(best, time.Since(t0))
	}
	goruntime.KeepAlive(ids) // the reads are the point: keep them
	work := float64(recordWorkGo)
	if fast {
		work = recordWorkAsm
	}
	return float64(best.Nanoseconds())/reads + work
}
