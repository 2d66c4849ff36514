//go:build amd64

// Command floorpair measures goxray's Enter+Exit against the floor of the
// clock the tracer uses, independently of bench's rows: its own loops of
// two clock reads and two 8-byte stores (floor_amd64.s), run n pairs per
// call so that no call is counted in the floor, against
// `xray.Enter(1); xray.Exit(1)` through the public API, in interleaved
// stretches of 1000 pairs; the fastest stretch of each is its figure (on
// a shared machine a stretch another process interrupted is slower, never
// faster). It also times the other orderings of a TSC read that the CPU
// can run, for internal/tsc's choice of the cheapest correct one, and with
// -skid shows what an unfenced read misses: a chain of dependent cache
// misses, then a read without and with LFENCE.
//
//	go run -C bench ./floorpair [-rounds 300] [-skid]
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"time"
	"unsafe"

	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/asm"
	"github.com/goxray/xray/internal/tsc"
)

var sink [2]uint64

type row struct {
	name  string
	clock string // the tsc clock this floor is the floor of, if any
	ok    bool
	f     func()
}

func main() {
	rounds := flag.Int("rounds", 300, "stretches of 1000 pairs per row")
	skid := flag.Bool("skid", false, "also show what an unfenced read misses after dependent cache misses")
	flag.Parse()
	dir, err := os.MkdirTemp("", "floorpair")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	err = xray.Start(xray.Options{Dir: dir, FlushSignal: xray.NoSignal, Logf: func(string, ...any) {},
		OverheadBudget: xray.NoOverheadBudget, IgnoreEnv: true})
	if err != nil {
		fail(err)
	}
	st := xray.Stats()
	inv := asm.InvariantTSC()
	rows := []row{
		{"goxray Enter+Exit", "", true, func() {
			for range 1000 {
				xray.Enter(1)
				xray.Exit(1)
			}
		}},
		{"LFENCE;RDTSC", tsc.LfenceRDTSC, inv, func() { pairsLfenceRDTSC(&sink, 1000) }},
		{"RDTSCP", tsc.RDTSCP, asm.HasRDTSCP(), func() { pairsRDTSCP(&sink, 1000) }},
		{"RDPID;RDTSC", tsc.RDPIDRDTSC, inv && asm.HasRDPID(), func() { pairsRDPIDRDTSC(&sink, 1000) }},
		{"RDTSC alone", tsc.RDTSC, inv, func() { pairsRDTSC(&sink, 1000) }},
		{"RDTSC;LFENCE", "", inv, func() { pairsRDTSCLfence(&sink, 1000) }},
		{"LFENCE;RDTSC;LFENCE", "", inv, func() { pairsLfenceRDTSCLfence(&sink, 1000) }},
		{"MFENCE;LFENCE;RDTSC", "", inv, func() { pairsMfenceRDTSC(&sink, 1000) }},
	}
	best := make([]time.Duration, len(rows))
	for i := range best {
		best[i] = math.MaxInt64
	}
	for range *rounds {
		for i, r := range rows {
			if !r.ok {
				continue
			}
			t0 := time.Now()
			r.f()
			best[i] = min(best[i], time.Since(t0))
		}
	}
	xray.Stop()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("# clock: %s (record path: %s); fastest of %d stretches of 1000 pairs; load average %.14s\n", st.Clock, st.RecordPath, *rounds, load)
	floor := -1
	for i, r := range rows {
		if r.ok && r.clock == st.Clock {
			floor = i
		}
	}
	for i, r := range rows {
		if !r.ok {
			continue
		}
		ratio := ""
		if floor >= 0 {
			ratio = fmt.Sprintf("%.3f", float64(best[i])/float64(best[floor]))
		}
		mark := ""
		if i == floor {
			mark = " (the clock's floor)"
		}
		fmt.Printf("%-22s %7.2f ns a pair  %s × floor%s\n", r.name, float64(best[i])/1000, ratio, mark)
	}
	if *skid && inv {
		showSkid()
	}
}

// showSkid follows chains of 1, 10 and 50 dependent loads that miss the
// caches, each timed by a fenced read before and by a read after without
// and with LFENCE (and a fenced read after that): the unfenced read is
// taken while the chain is still in flight.
func showSkid() {
	const n = 1 << 24 // 128 MiB of pointers: every load misses
	cells := make([]uintptr, n)
	perm := rand.Perm(n)
	for i := range n {
		cells[perm[i]] = uintptr(unsafe.Pointer(&cells[perm[(i+1)%n]]))
	}
	fmt.Println("dependent misses, then a read: ticks from the read before to it, and from it to a fenced read after (medians of 200)")
	for _, k := range []int{1, 10, 50} {
		for _, fenced := range []bool{false, true} {
			var took, missed []uint64
			for range 200 {
				b, a, e := chase(&cells[rand.IntN(n)], k, fenced)
				took = append(took, a-b)
				missed = append(missed, e-a)
			}
			slices.Sort(took)
			slices.Sort(missed)
			name := "RDTSC alone"
			if fenced {
				name = "LFENCE;RDTSC"
			}
			fmt.Printf("%2d misses, %-12s %7d ticks to the read, %7d after it\n", k, name, took[100], missed[100])
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "floorpair:", err)
	os.Exit(1)
}
