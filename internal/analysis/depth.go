package analysis

import "fmt"

// MaxFrames bounds the call paths the views print: stack's folded lines,
// flame's frames, pprof's samples and top's hottest paths. A path deeper
// than MaxFrames keeps its outermost MaxFrames/2 and its innermost
// MaxFrames/2 frames with one frame between them that says how many were
// elided, "[N frames elided]" ("[N to M frames elided]" when paths that
// elide different numbers of frames become the same and are merged: calls
// and self times summed, inclusive times counted once where one merged
// path is inside another, as in a recursion). A path is O(depth), so without a bound a 10^5-deep
// recursion, 10^5 paths, would print 10^10 frames; with it every view is
// linear in the number of records. Totals per function (account, top's
// table) are computed on the whole paths and are exact.
const MaxFrames = 256

// elideMarker is the childKey.fn of elision markers; markers are told
// apart from functions by childKey.marker, so any id may appear.
const elideMarker = 0

// elided is the range of frame counts an elision marker stands for.
type elided struct{ min, max int }

// frameKey is what makes two frames of a path the same frame.
type frameKey struct {
	fn      uint32
	spawned bool
}

// periods is how many short recursion periods (f→f, f→g→f, …) capped
// recognises, so that deep recursions map each node in O(1) instead of
// walking MaxFrames/2 frames.
const periods = 8

// capped returns the profile with every path longer than MaxFrames elided
// (see MaxFrames), or p itself when none is. Its nodes' calls and self
// times are sums over the nodes of p that map to them, their inclusive
// times sums over those that are not inside another (a recursion merged
// with itself counts once, as pprof's cum does); work is O(nodes) for paths of
// short recursion periods and O(nodes × MaxFrames/2) at worst.
func (p *Profile) capped() *Profile {
	depth := make([]int32, len(p.Nodes))
	deepest := int32(0)
	for i := 1; i < len(p.Nodes); i++ {
		depth[i] = depth[p.Nodes[i].Parent] + 1
		deepest = max(deepest, depth[i])
	}
	if deepest <= MaxFrames {
		return p
	}
	depth = nil
	// q says what p says of the file (every field but the tree's), so a
	// field added to Profile reaches the capped views without a line here.
	q := new(Profile)
	*q = *p
	q.Nodes, q.index, q.elided, q.stacks, q.scanned = []Node{{Parent: -1}}, map[childKey]int32{}, map[int32]elided{}, nil, 0
	const half = MaxFrames / 2
	type pos struct {
		n    int32          // node of p
		q    int32          // node of q it maps to
		key  frameKey       // its frame
		runs [periods]int32 // frames up to here equal to the frame `period` above them
		next int            // index of the next child to visit
	}
	path := make([]pos, 0, 64) // path[d-1] is at depth d
	var onPath []int32         // per node of q: how many nodes of the path map to it
	push := func(n int32) {
		nd := &p.Nodes[n]
		d := len(path) + 1
		cur := pos{n: n, key: frameKey{nd.Func, nd.Spawned}}
		for k := 1; k <= periods; k++ {
			if d-k >= 1 && path[d-k-1].key == cur.key {
				cur.runs[k-1] = 1
				if d >= 2 {
					cur.runs[k-1] += path[d-2].runs[k-1]
				}
			}
		}
		switch {
		case d <= MaxFrames:
			parent := int32(0)
			if d > 1 {
				parent = path[d-2].q
			}
			cur.q = q.child(parent, nd.Func, nd.Spawned)
		default:
			e := q.marker(path[half-1].q, d-MaxFrames)
			cur.q = -1
			// The innermost half equals that of the node `period`
			// frames up, when that one is elided too: same node.
			for k := 1; k <= periods; k++ {
				if cur.runs[k-1] >= half && d-k > MaxFrames {
					cur.q = path[d-k-1].q
					break
				}
			}
			if cur.q < 0 {
				at := e
				for j := d - half; j < d-1; j++ {
					at = q.child(at, path[j].key.fn, path[j].key.spawned)
				}
				cur.q = q.child(at, nd.Func, nd.Spawned)
			}
		}
		qn := &q.Nodes[cur.q]
		qn.Calls += nd.Calls
		qn.Self += nd.Self
		qn.Open += nd.Open
		qn.Before += nd.Before
		qn.SkipShed = qn.SkipShed || nd.SkipShed
		qn.SelfShed = qn.SelfShed || nd.SelfShed
		for int(cur.q) >= len(onPath) {
			onPath = append(onPath, 0)
		}
		if onPath[cur.q] == 0 {
			// Inclusive time: a node merged with one of its own
			// ancestors (a recursion) is inside the ancestor's time.
			qn.Total += nd.Total
		}
		onPath[cur.q]++
		path = append(path, cur)
	}
	for _, r := range p.Nodes[0].Children {
		push(r)
		for len(path) > 0 {
			top := &path[len(path)-1]
			cs := p.Nodes[top.n].Children
			if top.next == len(cs) {
				onPath[top.q]--
				path = path[:len(path)-1]
				continue
			}
			c := cs[top.next]
			top.next++
			push(c)
		}
	}
	return q
}

// marker returns the elision marker under parent, noting that it stands
// for n more frames.
func (p *Profile) marker(parent int32, n int) int32 {
	k := childKey{parent: parent, fn: elideMarker, marker: true}
	c, ok := p.index[k]
	if !ok {
		c = int32(len(p.Nodes))
		p.Nodes = append(p.Nodes, Node{Func: elideMarker, Parent: parent})
		p.Nodes[parent].Children = append(p.Nodes[parent].Children, c)
		p.index[k] = c
		p.elided[c] = elided{n, n}
		return c
	}
	r := p.elided[c]
	p.elided[c] = elided{min(r.min, n), max(r.max, n)}
	return c
}

// elisionName is the frame name of an elision marker.
func (r elided) name() string {
	if r.min == r.max {
		return fmt.Sprintf("[%d frames elided]", r.min)
	}
	return fmt.Sprintf("[%d to %d frames elided]", r.min, r.max)
}
