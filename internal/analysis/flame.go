package analysis

import (
	"github.com/goxray/xray/internal/flame"
	"github.com/goxray/xray/internal/instrmap"
)

// FlameTree turns the profile into a flame graph tree whose values are
// self nanoseconds (ticks without a frequency), so each frame is as wide as
// its inclusive time. A spawned goroutine's subtree ("go NAME") widens its
// spawner's frame in the drawing: the graph shows goroutine time, and its
// label says the time is concurrent.
//
// Paths deeper than MaxFrames are elided ("[N frames elided]").
func FlameTree(p *Profile, m *instrmap.Map) *flame.Tree {
	p = p.capped()
	t := flame.NewTree(flame.Self)
	at := make([]int32, len(p.Nodes)) // node → its frame; parents come first
	at[0] = flame.Root
	for i := 1; i < len(p.Nodes); i++ {
		nd := &p.Nodes[i]
		at[i] = t.AddChild(at[nd.Parent], p.FrameName(m, int32(i)), uint64(p.Nanos(nd.Self)))
	}
	return t
}
