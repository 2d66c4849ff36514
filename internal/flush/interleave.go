package flush

import (
	"cmp"
	"slices"
)

// maxSplits bounds the runs interleave splits for one goroutine: past it,
// the goroutine's runs are interleaved so finely that the per-record merge
// is the cheaper way.
const maxSplits = 64

// interleave sorts a goroutine's kept runs (planFast's order) into
// planGoroutine's merge order (TSC, then key), splitting a run where
// another begins inside it. A goroutine that leaves a P and comes back
// with no other goroutine writing there meanwhile continues its block on
// that P, so one run can span the time it spent elsewhere: the runs it
// wrote elsewhere fall into a gap of that run, and merging by record puts
// them there. interleave cuts the spanning run at the first record that
// follows the inner run's first in merge order (both parts keep its key,
// the second with the TSC of the record before it as its base, as cut
// makes any part) and sorts the second part back in, until no two runs
// overlap. It reports false, having only added runs to ix.runs, when the
// runs interleave finer than maxSplits splits or a part would hold an Exit
// that closes a call opened in it but not the innermost one (cut).
func (ix *indexed) interleave(segs [][]byte, order []placed) ([]placed, bool) {
	less := func(a, b placed) int {
		if c := cmp.Compare(ix.runs[a.run].first, ix.runs[b.run].first); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	}
	if !slices.IsSortedFunc(order, less) {
		slices.SortFunc(order, less)
	}
	splits := 0
	for k := 1; k < len(order); k++ {
		ak, bk := order[k-1].key, order[k].key
		a, b := ix.runs[order[k-1].run], &ix.runs[order[k].run]
		t := b.first
		if a.last < t || a.last == t && ak <= bk {
			continue
		}
		// b's first record falls inside a: a's records before it in
		// merge order, then the rest. a's first record precedes it (the
		// order is sorted) and its last follows it, so neither part is
		// empty.
		if splits++; splits > maxSplits {
			return order, false
		}
		before, after := t, t-1 // a's records at TSC t follow b's first
		if ak < bk {
			before, after = t+1, t // they precede it
		}
		p1, ok := ix.cut(segs[a.seg], &a, a.first-1, before)
		if !ok {
			return order, false
		}
		p2, ok := ix.cut(segs[a.seg], &a, after, a.last+1)
		if !ok || p1.records == 0 || p2.records == 0 || p1.records+p2.records != a.records {
			return order, false
		}
		ix.runs = append(ix.runs, p1, p2)
		n := int32(len(ix.runs))
		order[k-1] = placed{n - 2, ak}
		second := placed{n - 1, ak}
		i, _ := slices.BinarySearchFunc(order[k:], second, less)
		order = slices.Insert(order, k+i, second)
	}
	return order, true
}
