package engine

import (
	"bytes"
	"io"
	"os"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/flush"
	"github.com/goxray/xray/internal/glayout"
	"github.com/goxray/xray/internal/registry"
	"github.com/goxray/xray/internal/xraytool"
)

func openStackOuter(ready chan<- uint64, done <-chan struct{}) { openStackInner(ready, done) }

//go:noinline
func openStackInner(ready chan<- uint64, done <-chan struct{}) {
	ready <- glayout.Goid()
	<-done
}

// openConfig is a flight recorder of 4 MiB: turnOver recycles it, and
// it holds a quarter second of a goroutine recording non-stop, more than
// a flush takes to read the stacks and copy it.
func openConfig(t *testing.T) Config {
	c := config(t)
	c.BufferSize, c.BufferCount = 64<<10, 64
	return c
}

// turnOver records enough on this goroutine to recycle the whole ring,
// so that a flush's window begins after everything recorded before.
func turnOver() {
	id := registry.Register("engine_test.turnOver")
	for range 300000 {
		Enter(id)
		Exit(id)
	}
}

// openFile is what a file says of calls open across its window.
type openFile struct {
	open    map[uint64][]uint32 // by goroutine (low 32 bits): the ids its open-calls event names
	unshown int                 // fdr.ParseOpenUnknown's count; -1 without the event
}

// flushOpen flushes and reads what the file says of open calls (with
// fdr.Reader: a whole parse of a 4 MiB window takes seconds).
func flushOpen(t *testing.T) openFile {
	t.Helper()
	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := fdr.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	of := openFile{open: map[uint64][]uint32{}, unshown: -1}
	entered := map[int32][]uint32{}
	done := map[int32]bool{}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if done[e.TID] {
			continue
		}
		switch {
		case e.Type == fdr.EventEnter:
			entered[e.TID] = append(entered[e.TID], e.FuncID)
		case e.Type == fdr.EventCustom:
			if n, ok := fdr.ParseOpenUnknown(e.Data); ok {
				of.unshown = n
			}
			if ids, ok := fdr.ParseOpen(e.Data); ok {
				if en := entered[e.TID]; len(en) < len(ids) || !slices.Equal(en[len(en)-len(ids):], ids) {
					t.Errorf("goroutine %d: open-calls event %v after Entries %v", e.TID, ids, en)
				}
				of.open[uint64(uint32(e.TID))] = ids
				done[e.TID] = true
			}
		}
		if len(entered[e.TID]) > 200 {
			done[e.TID] = true // past where reconstructed Entries are
		}
	}
	return of
}

// at returns the ids the open-calls event of goroutine g names.
func (of openFile) at(g uint64) []uint32 { return of.open[g&0xffffffff] }

// TestOpenCallsOfClosures: a goroutine's root that is a function literal
// traced by `goxray build` (the split shape: the literal calls its traced
// copy, nested in it, on its first line), and a gated function holding a
// literal (the conditional shape: its frame is the call), are rebuilt
// with their ids and nesting when they are open across the window.
func TestOpenCallsOfClosures(t *testing.T) {
	startT(t, openConfig(t))
	var litGate, holderGate atomic.Uint32
	ready, done := make(chan uint64), make(chan struct{})
	defer close(done)
	lit := splitLiteral(&litGate, func() { openStackHolder(&holderGate, ready, done) })
	litID, holderID := registry.FuncOf(lit), registry.FuncOf(openStackHolder)
	innerID := registry.FuncOf(openStackInner)
	RegisterGates([]uint32{litID, holderID}, []*atomic.Uint32{&litGate, &holderGate})
	go lit()
	g := <-ready
	turnOver()
	of := flushOpen(t)
	if got, want := of.at(g), []uint32{litID, holderID, innerID}; !slices.Equal(got, want) {
		t.Errorf("open across the window: %v, want %v (literal, function holding a literal, inner)", got, want)
	}
}

// openStackHolder has the conditional shape of a gated function holding
// a literal.
func openStackHolder(gate *atomic.Uint32, ready chan<- uint64, done <-chan struct{}) {
	if gate.Load() != 0 {
		_ = 0 // Enter; defer Exit
	}
	f := func() { openStackInner(ready, done) }
	f()
}

// TestOpenCallsNeverUntraced: no Entry for a call that began before
// Start, while its function was unpatched (Unpatch, UnpatchAll), or with
// its gate closed, even when the function is traced again by the flush;
// the file says that those goroutines may lack calls.
func TestOpenCallsNeverUntraced(t *testing.T) {
	ready, done := make(chan uint64), make(chan struct{})
	defer close(done)
	preID, unpID, gatedID := registry.FuncOf(openStackOuter), registry.FuncOf(openStackUnpatched), registry.FuncOf(openStackGated)
	registry.FuncOf(openStackInner) // a traced call inside each: the others are outside it
	var gate atomic.Uint32
	RegisterGates([]uint32{gatedID}, []*atomic.Uint32{&gate})
	for _, c := range []struct {
		name  string
		bad   uint32
		begin func() uint64
	}{
		{"begun before Start", preID, nil},
		{"begun unpatched", unpID, func() uint64 {
			Unpatch(unpID)
			defer Patch(unpID)
			go openStackUnpatched(ready, done)
			return <-ready
		}},
		{"begun while every id was unpatched", unpID, func() uint64 {
			UnpatchAll()
			defer PatchAll()
			go openStackUnpatched(ready, done)
			return <-ready
		}},
		{"begun with its gate closed", gatedID, func() uint64 {
			Unpatch(gatedID) // closes the gate
			defer Patch(gatedID)
			go openStackGated(&gate, ready, done)
			return <-ready
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var g uint64
			if c.begin == nil {
				go openStackOuter(ready, done)
				g = <-ready
			}
			if err := Start(openConfig(t)); err != nil {
				t.Fatal(err)
			}
			defer Stop()
			if c.begin != nil {
				g = c.begin()
			}
			turnOver()
			of := flushOpen(t)
			if ids := of.at(g); slices.Contains(ids, c.bad) {
				t.Errorf("the file shows %d open: %v", c.bad, ids)
			}
			if of.unshown < 1 {
				t.Errorf("the file says %d goroutines may lack calls open across the window, want at least 1", of.unshown)
			}
		})
	}
}

func openStackUnpatched(ready chan<- uint64, done <-chan struct{}) { openStackInner(ready, done) }

// openStackGated has the split shape, gate closed: it runs its plain body.
func openStackGated(gate *atomic.Uint32, ready chan<- uint64, done <-chan struct{}) {
	if gate.Load() != 0 {
		func() { openStackInner(ready, done) }()
		return
	}
	openStackInner(ready, done)
}

// TestOpenCallsOfBusyGoroutine: a goroutine that records every few
// microseconds is placed among its records: the call it runs in across
// the whole window is shown in every file.
func TestOpenCallsOfBusyGoroutine(t *testing.T) {
	startT(t, openConfig(t))
	rootID, workID := registry.FuncOf(openBusyRoot), registry.FuncOf(openBusyWork)
	var stop atomic.Bool
	gch := make(chan uint64)
	go openBusyRoot(workID, &stop, gch)
	g := <-gch
	defer stop.Store(true)
	for i := range 3 {
		turnOver()
		d0 := ReadStats().Drops.Flush
		of := flushOpen(t)
		ids := of.at(g)
		if len(ids) == 0 || ids[0] != rootID {
			// A flush during which a goroutine dropped records (a slow
			// flusher: the race detector) places no stack, and says so.
			if ReadStats().Drops.Flush != d0 && of.unshown >= 1 && !slices.Contains(ids, rootID) {
				continue
			}
			t.Errorf("flush %d: open across the window %v, want %d first", i, ids, rootID)
		}
	}
}

func openBusyRoot(work uint32, stop *atomic.Bool, g chan<- uint64) {
	g <- glayout.Goid()
	for !stop.Load() {
		openBusyWork(work)
	}
}

//go:noinline
func openBusyWork(id uint32) {
	Enter(id)
	x := 0
	for i := range 2000 {
		x += i
	}
	sinkInt.Store(int64(x))
	Exit(id)
}

var sinkInt atomic.Int64

// TestOpenCallsOfDeepStack: a stack deeper than the tracer records has
// its outer calls missing, and the file says that a goroutine may lack
// calls; one within the bound is rebuilt whole.
func TestOpenCallsOfDeepStack(t *testing.T) {
	startT(t, openConfig(t))
	rootID := registry.FuncOf(openDeepRoot)
	ready, done := make(chan uint64), make(chan struct{})
	defer close(done)
	go openDeepRoot(200, ready, done)
	deep := <-ready
	go openDeepRoot(60, ready, done)
	shallow := <-ready
	turnOver()
	of := flushOpen(t)
	if ids := of.at(deep); slices.Contains(ids, rootID) {
		t.Errorf("200 frames deep: root shown, though the tracer cannot have read it: %v", ids)
	}
	if ids := of.at(shallow); !slices.Contains(ids, rootID) {
		t.Errorf("60 frames deep: root not shown: %v", ids)
	}
	if n := of.unshown; n < 1 {
		t.Errorf("the file says %d goroutines may lack calls open across the window, want at least 1", n)
	}
}

func openDeepRoot(depth int, ready chan<- uint64, done <-chan struct{}) {
	openDeep(depth, ready, done)
}

//go:noinline
func openDeep(n int, ready chan<- uint64, done <-chan struct{}) {
	if n == 0 {
		openStackInner(ready, done)
		return
	}
	openDeep(n-1, ready, done)
}

// TestClassifyFrames: which frames are calls, with whose id, and which
// the reading vouches for.
func TestClassifyFrames(t *testing.T) {
	hand := registry.Register("example.com/p.Hand")
	split := registry.Register("example.com/p.Split")
	cond := registry.Register("example.com/p.Cond")
	leaf := registry.Register("example.com/p.leaf")
	unp := registry.Register("example.com/p.Unpatched")
	RegisterGates([]uint32{split, cond, leaf}, []*atomic.Uint32{new(atomic.Uint32), new(atomic.Uint32), new(atomic.Uint32)})
	resetTaint()
	Unpatch(unp)
	Patch(unp)
	defer resetTaint()
	fr := func(names ...string) []stackFrame {
		var fs []stackFrame
		for _, n := range names {
			fs = append(fs, stackFrame{fn: []byte(n)})
		}
		return fs
	}
	fs := fr("example.com/p.Hand", "example.com/p.Split", "example.com/p.__xray_Split", "example.com/p.Cond",
		"example.com/p.Unpatched", "example.com/p.__xray_gated_leaf", "example.com/p.__xray_leaf", "example.com/p.leaf", "runtime.gopark")
	var c classifier
	c.taint = taint.Load()
	c.dispatched = map[string]bool{"example.com/p.leaf": true}
	gateMu.Lock()
	c.frames(fs, 1)
	gateMu.Unlock()
	want := []flush.OpenFrame{
		{ID: hand, Traced: false},                // before Start (pre = 1)
		{ID: split, Traced: true},                // its copy
		{ID: cond, Traced: true},                 // its own gate, open all session
		{ID: unp, Optional: true, Traced: false}, // unpatched during the session
		{ID: leaf, Traced: true},                 // a dispatched function's copy
		{ID: leaf, Optional: true},               // one its caller's plain body called
	}
	if !slices.Equal(c.out, want) {
		t.Errorf("frames\n got %+v\nwant %+v", c.out, want)
	}
}

// TestFlushSaysStacksUnread: past maxStackGoroutines the flush reads no
// stack, and its file says that calls open across the window are not
// shown.
func TestFlushSaysStacksUnread(t *testing.T) {
	defer func(n int) { maxStackGoroutines = n }(maxStackGoroutines)
	maxStackGoroutines = 0
	startT(t, config(t))
	id := registry.FuncOf(openStackOuter)
	Enter(id)
	Exit(id)
	if of := flushOpen(t); of.unshown != 0 {
		t.Error("the file does not say the stacks were not read")
	}
}

// TestOpenCallsInteropLLVM: llvm-xray 14 and 19 load a file with calls
// open across its window, rebuilt from a stack, and the count of
// goroutines that may lack some; they read the rebuilt Entries first on
// the goroutine's thread, outermost first.
func TestOpenCallsInteropLLVM(t *testing.T) {
	c := config(t)
	c.BufferSize, c.BufferCount = 4096, 16
	startT(t, c)
	ready, done := make(chan uint64), make(chan struct{})
	defer close(done)
	outer, inner := registry.FuncOf(openStackOuter), registry.FuncOf(openStackInner)
	go openStackOuter(ready, done)
	g := <-ready
	go openDeepRoot(200, ready, done)
	<-ready
	id := registry.Register("engine_test.turnOver")
	for range 20000 {
		Enter(id)
		Exit(id)
	}
	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"llvm-xray", "llvm-xray-19"} {
		bin := xraytool.NeedExec(t, name, "apt-get install -y llvm llvm-19")
		tr := xraytool.Check(t, bin, path)
		var got []uint32
		var unknown bool
		for _, r := range tr.ByThread()[int32(g)] {
			if r.Kind == "function-enter" {
				got = append(got, r.FuncID)
			}
		}
		for _, r := range tr.Records {
			if _, ok := fdr.ParseOpenUnknown([]byte(r.Data)); ok && r.Kind == "custom-event" {
				unknown = true
			}
		}
		if !slices.Equal(got, []uint32{outer, inner}) || !unknown {
			t.Errorf("%s: goroutine %d's Entries %v, want %v; count of goroutines that may lack some read: %v", name, g, got, []uint32{outer, inner}, unknown)
		}
	}
}

// TestStartStacksBefore: which frames of a stack may be calls that were
// open at Start, as the stack read then says.
func TestStartStacksBefore(t *testing.T) {
	pc := func(f any) uint64 { return uint64(reflect.ValueOf(f).Pointer()) + 1 }
	a, b, b2, c := pc(openStackOuter), pc(openStackInner), pc(openStackInner)+1, pc(openDeep)
	fs := func(pcs ...uint64) []stackFrame {
		var out []stackFrame
		for _, p := range pcs {
			out = append(out, stackFrame{pc: p})
		}
		return out
	}
	ss := &startStacks{known: true, gs: map[uint64]startStack{
		2: {},
		3: {pcs: []uint64{a, b}},
		4: {pcs: []uint64{a, b}},
		5: {pcs: []uint64{a}, partial: true},
		6: {pcs: []uint64{a, b}, partial: true},
	}}
	for _, c := range []struct {
		g    uint64
		fs   []stackFrame
		want int
	}{
		{1, fs(a, b), 0},    // began after Start
		{2, fs(a, b, c), 3}, // stack at Start not read
		{3, fs(a, b, c), 2}, // c is new
		{4, fs(a, b2), 2},   // the same call of b, moved on
		{5, fs(a, c), 2},    // the frame under a at Start is unknown
		{6, fs(a, c, b), 1}, // a call other than b under a: new
	} {
		if got := ss.before(c.g, c.fs); got != c.want {
			t.Errorf("goroutine %d: %d frames may be from before Start, want %d", c.g, got, c.want)
		}
	}
	if got := (&startStacks{}).before(1, fs(a, b)); got != 2 {
		t.Errorf("no read at Start: %d frames may be from before it, want 2", got)
	}
}
