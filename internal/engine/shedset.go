package engine

import (
	"slices"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/stream"
)

// The shed set as files tell it. A shed event (written once, when the
// governor decides) leaves a flight recorder's window with the records
// around it, and a file without it would show every call path that went
// through a shed function as if its caller had called the function's
// callees directly. So the runtime keeps, for every function shed this
// session, when it was shed and the functions seen calling it and called
// by it in the records just before, and the flusher repeats all of it at
// the start of every file (flush.Params.Shed).

// shedInfo holds what noteShed learned, by id, under gateMu; setGates
// empties it with the shed set.
var shedInfo map[uint32]fdr.Shed

// shedNotes learns, from the newest records of session s, the share of
// the calls of ids and their callers and callees, and the budget that shed
// them. Called by shedIDs with no lock held, before the gates close, so
// that a file flushed just after a gate closed already tells all of it
// (closeShed stores the notes, with when, in the same critical section
// as the close). It costs a copy of the newest records (the governor's
// sample size), once per shed decision, into the governor's notesCopy: its caller
// holds shedMu, as every shed does.
func shedNotes(s *session, ids []uint32) map[uint32]fdr.Shed {
	if len(ids) == 0 {
		return nil
	}
	info := make(map[uint32]fdr.Shed, len(ids))
	for _, id := range ids {
		info[id] = fdr.Shed{FuncID: id}
	}
	var data [][]byte
	mu.Lock()
	if s != nil && cur == s {
		for id, sh := range info {
			sh.Budget = s.cfg.OverheadBudget / 100
			info[id] = sh
		}
		sn := s.q.Sample(s.gov.notesCopy, sampleBytes)
		s.gov.notesCopy = sn.Buf
		for _, sg := range sn.Segments {
			data = append(data, sg.Data)
		}
	}
	mu.Unlock()
	neighbours(data, info)
	return info
}

// neighbours fills the Share, Callers and Callees of info's entries from
// segs, block streams as the writers wrote them. Each block's calls are
// followed from an empty stack: an Entry with nothing open under it in
// its block has no caller this can name, and when no Entry of a function
// has one its callers stay unknown (nil), which readers take as "any
// function".
func neighbours(segs [][]byte, info map[uint32]fdr.Shed) {
	callers := map[uint32]map[uint32]bool{}
	callees := map[uint32]map[uint32]bool{}
	entries := map[uint32]int{}
	total := 0
	var stack []uint32
	add := func(m map[uint32]map[uint32]bool, k, v uint32) {
		if m[k] == nil {
			m[k] = map[uint32]bool{}
		}
		m[k][v] = true
	}
	var w stream.Walker
	for _, d := range segs {
		// A malformed stream (none is expected) ends the count where the
		// fault is: an estimate needs no more.
		w.Reset(d)
		for w.NextBlock() {
			stack = stack[:0]
			for {
				word, ok := w.Function()
				if !ok {
					break
				}
				a, id := fdr.FunctionFields(word)
				switch a {
				case fdr.Enter, fdr.EnterArgs:
					total++
					if _, ok := info[id]; ok {
						entries[id]++
						if n := len(stack); n > 0 {
							add(callers, id, stack[n-1])
						}
					}
					if n := len(stack); n > 0 {
						if _, ok := info[stack[n-1]]; ok {
							add(callees, stack[n-1], id)
						}
					}
					stack = append(stack, id)
				case fdr.Exit, fdr.TailExit:
					if n := len(stack); n > 0 && stack[n-1] == id {
						stack = stack[:n-1]
					}
				}
			}
		}
	}
	sorted := func(m map[uint32]bool) []uint32 {
		ids := make([]uint32, 0, len(m))
		for id := range m {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return ids
	}
	for id, sh := range info {
		if entries[id] == 0 {
			continue // not in the records: nothing is known of its neighbours
		}
		sh.Share = float64(entries[id]) / float64(total)
		sh.Callees = sorted(callees[id])
		if len(callers[id]) > 0 {
			// Entries with nothing under them in their block had some
			// caller too, most likely one of those seen: a block begins
			// wherever its goroutine came back to the P.
			sh.Callers = sorted(callers[id])
		}
		info[id] = sh
	}
}

// ShedSet returns the functions shed this session (or the last one), in
// id order, with what noteShed learned of each.
func ShedSet() []fdr.Shed {
	gateMu.Lock()
	defer gateMu.Unlock()
	out := make([]fdr.Shed, 0, len(shed))
	for _, id := range shed {
		sh, ok := shedInfo[id]
		if !ok {
			sh = fdr.Shed{FuncID: id}
		}
		out = append(out, sh)
	}
	return out
}
