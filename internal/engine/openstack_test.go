package engine

import (
	"bytes"
	"fmt"
	"os"
	goruntime "runtime"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/registry"
)

func openStackOuter(ready chan<- struct{}, done <-chan struct{}) { openStackInner(ready, done) }

//go:noinline
func openStackInner(ready chan<- struct{}, done <-chan struct{}) {
	ready <- struct{}{}
	<-done
}

// TestOpenStacks: a goroutine blocked in two functions registered under
// their symbol names shows them, outermost first; functions with a gate
// are left out (their frame may be a call that began untraced).
func TestOpenStacks(t *testing.T) {
	outer := registry.FuncOf(openStackOuter)
	inner := registry.FuncOf(openStackInner)
	ready, done := make(chan struct{}), make(chan struct{})
	defer close(done)
	go openStackOuter(ready, done)
	<-ready
	open, from, to, ok := openStacks()
	if !ok {
		t.Fatal("stacks not read")
	}
	if from == 0 || to < from {
		t.Errorf("clock span %d..%d", from, to)
	}
	found := false
	for _, ids := range open {
		if slices.Equal(ids, []uint32{outer, inner}) {
			found = true
		}
	}
	if !found {
		t.Fatalf("no goroutine with [%d %d] in %v", outer, inner, open)
	}
}

// TestParseStacksGates: the traced copy of a gated function counts, the
// gated original does not, and a stack runtime.Stack elided is left out.
func TestParseStacksGates(t *testing.T) {
	id := registry.Register("example.com/p.F")
	RegisterGates([]uint32{id}, []*atomic.Uint32{new(atomic.Uint32)})
	text := "goroutine 7 [running]:\nexample.com/p.__xray_F(...)\n\t/x.go:3 +0x1\nexample.com/p.F(0x1)\n\t/x.go:2 +0x1\n\n" +
		"goroutine 8 [chan receive]:\nexample.com/p.F(0x1)\n\t/x.go:2 +0x1\n\n" +
		"goroutine 9 [chan receive]:\nexample.com/p.__xray_F(...)\n\t/x.go:3 +0x1\n...additional frames elided...\n"
	got := parseStacks([]byte(text), false)
	if !slices.Equal(got[7], []uint32{id}) || len(got[8]) != 0 || len(got[9]) != 0 {
		t.Errorf("stacks %v", got)
	}
}

// BenchmarkOpenStacks: what a flush pays to read the stacks of n parked
// goroutines, up to just under maxStackGoroutines (past it, none are
// read).
func BenchmarkOpenStacks(b *testing.B) {
	for _, n := range []int{100, maxStackGoroutines - 100} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ready, done := make(chan struct{}), make(chan struct{})
			for range n {
				go openStackOuter(ready, done)
				<-ready
			}
			b.ResetTimer()
			for range b.N {
				openStacks()
			}
			b.StopTimer()
			close(done)
			goruntime.Gosched()
		})
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
	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(fdr.OpenUnknownPayload)) {
		t.Error("the file does not say the stacks were not read")
	}
}
