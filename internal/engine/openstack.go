package engine

import (
	"bytes"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/goxray/xray/internal/registry"
)

// openStacks reads every goroutine's stack (runtime.Stack, which stops
// the world while it formats them) and returns, by goroutine id, the
// functions with an id on it, outermost first, and the clock just before
// and just after: flush.Params.Open, OpenFrom and OpenTo.
//
// Why the records a flush copies agree with the stacks at OpenFrom: a
// record whose clock was read by OpenFrom was being written by a goroutine
// pinned to its P, and the world cannot stop before it unpins, after it
// published the record; the copy comes later. A goroutine that records
// between OpenFrom and OpenTo is left to the flusher to ignore.
//
// A function counts when it was registered under its symbol name (the
// automatic instrumentation and FuncOf do) and its frame is a traced
// call: goxray build's traced copy of F (__xray_F), or a function without
// a gate (calls placed by hand, traced whenever a session ran when they
// began). A gated function's own frame is left out: it may be a call that
// began with its gate closed (shed, or no session), which has no record
// and never will; the original F directly outside __xray_F is merely the
// wrapper that chose the copy. Goroutines
// whose stack is too deep to print whole (runtime.Stack elides the
// middle) or does not fit in maxStackDump are left out.
//
// Above maxStackGoroutines goroutines it reads nothing and reports false:
// the dump would stop the world too long (it costs some microseconds per
// goroutine), and the file says that those calls are not shown.
func openStacks() (map[uint64][]uint32, uint64, uint64, bool) {
	if goruntime.NumGoroutine() > maxStackGoroutines {
		return nil, 0, 0, false
	}
	// Each runtime.Stack stops the world for the whole dump: size the
	// buffer so that one call usually suffices.
	size := min(max(int(stackDumpSize.Load()), goruntime.NumGoroutine()*stackPerGoroutine, 1<<16), maxStackDump)
	buf := make([]byte, size)
	var n int
	from, _ := now()
	for {
		n = goruntime.Stack(buf, true)
		if n < len(buf) || len(buf) >= maxStackDump {
			break
		}
		buf = make([]byte, min(2*len(buf), maxStackDump))
		from, _ = now() // the stacks of this try, not of the last
	}
	to, _ := now()
	stackDumpSize.Store(int64(n + n/4))
	return parseStacks(buf[:n], n == len(buf)), from, to, true
}

// maxStackGoroutines bounds the goroutines whose stacks a flush reads (a
// variable for tests).
var maxStackGoroutines = 10000

// stackDump is what openStacks read.
type stackDump struct {
	open     map[uint64][]uint32
	from, to uint64
	read     bool
}

func readStacks() *stackDump {
	var d stackDump
	d.open, d.from, d.to, d.read = openStacks()
	return &d
}

// stackDumpSize remembers how big the last dump was, stackPerGoroutine is
// the first guess.
var stackDumpSize atomic.Int64

const stackPerGoroutine = 2 << 10

// maxStackDump bounds the text openStacks reads the stacks from.
const maxStackDump = 16 << 20

// parseStacks reads runtime.Stack's text; truncated says the last
// goroutine's may be cut short.
func parseStacks(text []byte, truncated bool) map[uint64][]uint32 {
	out := map[uint64][]uint32{}
	ids := map[string]frameID{}
	lookup := func(name string) frameID {
		if f, ok := ids[name]; ok {
			return f
		}
		var f frameID
		if id, ok := registry.ID(name); ok {
			if !hasGate(id) {
				f.id = id
			}
		} else if strings.Contains(name, "__xray_") {
			if id, ok := registry.ID(strings.ReplaceAll(name, "__xray_", "")); ok {
				f.id = id // the traced copy
			}
		}
		ids[name] = f
		return f
	}
	for len(text) > 0 {
		var g []byte
		g, text, _ = bytes.Cut(text, []byte("\n\n"))
		if truncated && len(text) == 0 {
			break // possibly cut short
		}
		lines := bytes.Split(g, []byte("\n"))
		head, ok := bytes.CutPrefix(lines[0], []byte("goroutine "))
		if !ok {
			continue
		}
		num, _, _ := bytes.Cut(head, []byte(" "))
		goid, err := strconv.ParseUint(string(num), 10, 64)
		if err != nil {
			continue
		}
		var frames []frameID // innermost first
		elided := false
		for _, l := range lines[1:] {
			if len(l) == 0 || l[0] == '\t' {
				continue
			}
			if bytes.HasPrefix(l, []byte("created by ")) {
				break
			}
			if bytes.Contains(l, []byte("frames elided")) {
				elided = true
				break
			}
			i := bytes.LastIndexByte(l, '(')
			if i <= 0 {
				continue
			}
			if f := lookup(string(l[:i])); f.id != 0 {
				frames = append(frames, f)
			}
		}
		if elided || len(frames) == 0 {
			continue
		}
		stack := make([]uint32, 0, len(frames)) // outermost first
		for i := len(frames) - 1; i >= 0; i-- {
			stack = append(stack, frames[i].id)
		}
		out[goid] = stack
	}
	return out
}

type frameID struct{ id uint32 }
