package flame

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sort"
	"strconv"
	"strings"
)

// Values says how the numbers on folded lines relate to each other.
type Values int

const (
	// Inclusive values already contain the callees' values (llvm-xray's
	// time aggregation). A frame is as wide as the larger of its own value
	// and the sum of its callees, so a caller that has no line of its own
	// (it entered before the trace window began) still spans its callees.
	Inclusive Values = iota
	// Self values are the stack's own; a frame is as wide as its value plus
	// its callees (flamegraph.pl's convention, llvm-xray's counts).
	Self
)

// ParseValues maps "inclusive" and "self" to a Values.
func ParseValues(s string) (Values, error) {
	switch s {
	case "inclusive":
		return Inclusive, nil
	case "self":
		return Self, nil
	}
	return 0, fmt.Errorf("flame: values must be inclusive or self, not %q", s)
}

func (v Values) String() string {
	if v == Self {
		return "self"
	}
	return "inclusive"
}

// ParseOptions tune Parse.
type ParseOptions struct {
	Values Values
	// MergeThreads drops a first frame of the form thread_N (what llvm-xray
	// prepends unless -aggregate-threads is given), so the same stack on
	// different threads becomes one frame.
	MergeThreads bool
}

// ParseError reports a line that is not a folded stack.
type ParseError struct {
	Line int // 1-based
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("flame: line %d: %s", e.Line, e.Msg) }

// errOverflow is returned when the values do not fit in a uint64.
var errOverflow = errors.New("flame: values overflow uint64")

// node is one frame: a name under a parent. Nodes live in Tree.nodes and
// refer to each other by index, which keeps 10^5-stack trees compact.
type node struct {
	name     string
	parent   int32
	depth    int32
	stated   uint64  // sum of the values of lines ending here
	total    uint64  // width: computed by finish
	children []int32 // sorted by name after finish
}

type childKey struct {
	parent int32
	name   string
}

// Tree is a set of folded stacks merged by prefix. Build one with Parse or
// NewTree and Add.
type Tree struct {
	values   Values
	nodes    []node // nodes[0] is the root
	index    map[childKey]int32
	stacks   int // lines (or Add calls) accepted
	finished bool
	err      error
}

// NewTree returns an empty Tree whose values are read as v.
func NewTree(v Values) *Tree {
	return &Tree{values: v, nodes: []node{{name: "all", parent: -1}}, index: map[childKey]int32{}}
}

// Add records value for the stack given root first. An empty stack adds to
// the root itself.
func (t *Tree) Add(stack []string, value uint64) {
	cur := int32(0)
	for _, name := range stack {
		cur = t.child(cur, name)
	}
	t.add(cur, value)
}

// Root is the frame AddChild's first calls add under.
const Root int32 = 0

// AddChild records value for the stack made of parent's stack and name,
// and returns that frame, for the next AddChild of a stack under it: a
// tree walked parents first is added in O(1) per frame, where Add takes
// O(depth).
func (t *Tree) AddChild(parent int32, name string, value uint64) int32 {
	c := t.child(parent, name)
	t.add(c, value)
	return c
}

// child returns the frame name under parent, creating it.
func (t *Tree) child(parent int32, name string) int32 {
	k := childKey{parent, name}
	c, ok := t.index[k]
	if !ok {
		c = int32(len(t.nodes))
		// Clone: name may point into a whole input line.
		t.nodes = append(t.nodes, node{name: strings.Clone(name), parent: parent, depth: t.nodes[parent].depth + 1})
		t.nodes[parent].children = append(t.nodes[parent].children, c)
		t.index[k] = c
	}
	return c
}

// add adds value to frame n's stated value: one stack.
func (t *Tree) add(n int32, value uint64) {
	s, carry := bits.Add64(t.nodes[n].stated, value, 0)
	if carry != 0 && t.err == nil {
		t.err = errOverflow
	}
	t.nodes[n].stated = s
	t.stacks++
	t.finished = false
}

// Parse reads folded stacks from r (see the package comment for the
// format). Blank lines are skipped; any other line that is not a stack
// followed by an unsigned integer is a *ParseError.
func Parse(r io.Reader, o ParseOptions) (*Tree, error) {
	t := NewTree(o.Values)
	br := bufio.NewReaderSize(r, 1<<16)
	var frames []string
	for lineNo := 1; ; lineNo++ {
		// ReadString, not a Scanner: a deep stack of long Go names can be
		// longer than any fixed token limit.
		line, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return nil, err
		}
		if line != "" {
			var value uint64
			var msg string
			frames, value, msg = splitLine(line, frames[:0], o.MergeThreads)
			if msg != "" {
				return nil, &ParseError{Line: lineNo, Msg: msg}
			}
			if frames != nil {
				t.Add(frames, value)
			}
		}
		if err == io.EOF {
			break
		}
	}
	if err := t.finish(); err != nil {
		return nil, err
	}
	return t, nil
}

// splitLine parses one line into buf; it returns a nil stack for a blank
// line and a message for a bad one. Frame names share line's memory.
func splitLine(line string, buf []string, mergeThreads bool) ([]string, uint64, string) {
	line = strings.TrimRight(line, " \t\r\n")
	if strings.TrimLeft(line, " \t") == "" {
		return nil, 0, ""
	}
	sp := strings.LastIndexAny(line, " \t")
	if sp < 0 {
		return nil, 0, "no value: want frames, a space and a count"
	}
	v, err := strconv.ParseUint(line[sp+1:], 10, 64)
	if err != nil {
		return nil, 0, fmt.Sprintf("value %q is not an unsigned integer", line[sp+1:])
	}
	stack := strings.TrimRight(line[:sp], " \t")
	// llvm-xray ends every frame with ';'; flamegraph.pl's format does not.
	stack = strings.TrimSuffix(stack, ";")
	if stack == "" {
		return nil, 0, "empty stack"
	}
	for {
		i := strings.IndexByte(stack, ';')
		if i < 0 {
			buf = append(buf, stack)
			break
		}
		buf = append(buf, stack[:i])
		stack = stack[i+1:]
	}
	if mergeThreads && len(buf) > 1 && isThreadFrame(buf[0]) {
		buf = buf[1:]
	}
	return buf, v, ""
}

// isThreadFrame reports whether s is llvm-xray's per-thread root "thread_N".
func isThreadFrame(s string) bool {
	d := strings.TrimPrefix(s, "thread_")
	if len(d) == len(s) || d == "" {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// finish sorts siblings by name and computes every frame's width from the
// leaves up. Children always have larger indices than their parents, so a
// reverse walk over the slice visits callees first.
func (t *Tree) finish() error {
	if t.err != nil {
		return t.err
	}
	if t.finished {
		return nil
	}
	for i := len(t.nodes) - 1; i >= 0; i-- {
		n := &t.nodes[i]
		var sum uint64
		for _, c := range n.children {
			var carry uint64
			sum, carry = bits.Add64(sum, t.nodes[c].total, 0)
			if carry != 0 {
				return errOverflow
			}
		}
		if t.values == Self {
			var carry uint64
			n.total, carry = bits.Add64(n.stated, sum, 0)
			if carry != 0 {
				return errOverflow
			}
		} else {
			n.total = max(n.stated, sum)
		}
		if len(n.children) > 1 {
			sort.Slice(n.children, func(a, b int) bool {
				return t.nodes[n.children[a]].name < t.nodes[n.children[b]].name
			})
		}
	}
	t.finished = true
	return nil
}

// Total is the root's width: the sum of all top-level frames.
func (t *Tree) Total() (uint64, error) {
	if err := t.finish(); err != nil {
		return 0, err
	}
	return t.nodes[0].total, nil
}

// Stacks is the number of lines (or Add calls) that went into the tree.
func (t *Tree) Stacks() int { return t.stacks }

// Frame is one merged frame, as Walk reports it.
type Frame struct {
	Stack []string // root first, not including "all"; valid only during the callback
	Total uint64   // width: value including callees
	Self  uint64   // Total minus the callees' totals
}

// Walk calls fn for every frame, depth first, siblings in name order.
func (t *Tree) Walk(fn func(Frame)) error {
	if err := t.finish(); err != nil {
		return err
	}
	var stack []string
	var visit func(i int32)
	visit = func(i int32) {
		n := &t.nodes[i]
		var sum uint64
		for _, c := range n.children {
			sum += t.nodes[c].total
		}
		fn(Frame{Stack: stack, Total: n.total, Self: n.total - sum})
		for _, c := range n.children {
			stack = append(stack, t.nodes[c].name)
			visit(c)
			stack = stack[:len(stack)-1]
		}
	}
	for _, c := range t.nodes[0].children {
		stack = append(stack[:0], t.nodes[c].name)
		visit(c)
	}
	return nil
}
