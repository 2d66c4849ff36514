package why

// StateSpan is one state of a goroutine on the session's clock.
type StateSpan struct {
	Start, End uint64 // TSC
	State      State
	Reason     string // Blocked only
	Site       string // Blocked only
}

// States returns goroutine g's states (g: the low 32 bits of its id, an
// FDR thread id) mapped to the session's clock by al, in time order.
func (g *GoTrace) States(gid int32, al *Alignment) []StateSpan {
	spans := g.spans[gid]
	out := make([]StateSpan, 0, len(spans))
	for _, s := range spans {
		out = append(out, StateSpan{Start: al.TSC(s.t0), End: al.TSC(s.t1), State: s.state, Reason: s.reason, Site: s.site})
	}
	return out
}
