package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/instrmap"
)

// entered counts the innermost len(ids) frames of s, when they are the
// calls ids names, as open when the window began.
func (a *Accountant) entered(s *acctStack, ids []uint32) {
	n := len(s.frames) - len(ids)
	if n < 0 {
		return
	}
	for i, id := range ids {
		if s.frames[n+i].id != int32(id) {
			return
		}
	}
	if a.before == nil {
		a.before = map[int32]int64{}
	}
	for _, f := range s.frames[n:] {
		a.before[f.id]++
	}
}

// Notes is what the table lacks, for a file with header h (empty when
// nothing): the calls open at the window's ends, the shed set and what
// the build left untraced.
func (a *Accountant) Notes(h fdr.Header, m *instrmap.Map) string {
	var before, open int64
	for _, n := range a.before {
		before += n
	}
	for _, s := range a.stacks {
		open += int64(len(s.frames))
	}
	p := &Profile{Header: h, First: a.first}
	sheds := slices.Clone(a.Sheds)
	slices.SortFunc(sheds, func(x, y Shed) int { return cmp.Compare(x.TSC, y.TSC) })
	var b strings.Builder
	b.WriteString(a.openUnknown.Note())
	if before > 0 {
		fmt.Fprintf(&b, "%d calls were open when the window began: their entries are not in it, so their latencies count from its start (marked \"N %s\").\n", before, markBefore)
	}
	if open > 0 {
		fmt.Fprintf(&b, "%d calls were still running at the window's end: not in the table (marked \"N %s\").\n", open, markOpen)
	}
	b.WriteString(shedSummary(sheds, nil, m, p.Since, shedMarksShed, a.opt.ShedDetails))
	b.WriteString(a.Untraced.Note())
	return b.String()
}

// marks is the bracketed note on function id's name ("" when none).
func (a *Accountant) marks(id int32, open int64) string {
	var ms []string
	if n := a.before[id]; n > 0 {
		ms = append(ms, fmt.Sprintf("%d %s", n, markBefore))
	}
	if open > 0 {
		ms = append(ms, fmt.Sprintf("%d %s", open, markOpen))
	}
	if slices.ContainsFunc(a.Sheds, func(s Shed) bool { return s.FuncID == uint32(id) }) {
		ms = append(ms, markShed)
	}
	if len(ms) == 0 {
		return ""
	}
	return " [" + strings.Join(ms, ", ") + "]"
}
