package analysis

import "github.com/goxray/xray/internal/flame"

// FlameTree turns the profile into a flame graph tree whose values are
// self nanoseconds (ticks without a frequency), so each frame is as wide as
// its inclusive time. A spawned goroutine's subtree ("go NAME") widens its
// spawner's frame in the drawing: the graph shows goroutine time, and its
// label says the time is concurrent.
func FlameTree(p *Profile, m *Map) *flame.Tree {
	t := flame.NewTree(flame.Self)
	names := make([]string, len(p.Nodes))
	var path []string
	var visit func(n int32)
	visit = func(n int32) {
		nd := &p.Nodes[n]
		if names[n] == "" {
			names[n] = p.FrameName(m, n)
		}
		path = append(path, names[n])
		t.Add(path, uint64(p.Nanos(nd.Self)))
		for _, c := range nd.Children {
			visit(c)
		}
		path = path[:len(path)-1]
	}
	for _, c := range p.Nodes[0].Children {
		visit(c)
	}
	return t
}
