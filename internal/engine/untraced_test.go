package engine

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/buffer"
	"github.com/goxray/xray/internal/stream"
	"github.com/goxray/xray/internal/xraytool"
)

// withUntraced registers u for the test and empties the set afterwards:
// the other tests of the package expect files without it.
func withUntraced(t *testing.T, us ...fdr.Untraced) {
	t.Cleanup(func() {
		untraced.Lock()
		untraced.set, untraced.payloads = fdr.Untraced{}, nil
		untraced.Unlock()
	})
	for _, u := range us {
		RegisterUntraced(u)
	}
}

// fileUntraced merges the untraced events of a file, and reports whether
// they all sit at its start: on its first block, before any record.
func fileUntraced(t *testing.T, path string) (fdr.Untraced, bool) {
	t.Helper()
	f, err := fdr.ParseFileStrict(path)
	if err != nil {
		t.Fatal(err)
	}
	ths, err := f.Threads()
	if err != nil {
		t.Fatal(err)
	}
	var u fdr.Untraced
	front := true
	for i, th := range ths {
		seenRecord := false
		for _, e := range th.Events {
			p, ok := fdr.ParseUntraced(e.Data)
			if e.Type != fdr.EventCustom || !ok {
				if e.Type != fdr.EventCustom {
					seenRecord = true
				}
				continue
			}
			if i != 0 || seenRecord {
				front = false
			}
			u.MergeCounts(p, func(a, b int) int { return a + b })
			u.Funcs = append(u.Funcs, p.Funcs...)
		}
	}
	return u, front
}

// TestUntracedSetInEveryFile: every file of a flight recorder starts with
// the build's untraced set, counts and names, also once the ring has
// recycled the buffers written first; leaves are named first; llvm-xray
// 14 and 19 load the files.
func TestUntracedSetInEveryFile(t *testing.T) {
	small := fdr.Untraced{Counts: map[string]int{fdr.UntracedSmall: 900, fdr.UntracedInlinable: 40}}
	for i := range 600 { // more names than a file lists, over several events
		small.Funcs = append(small.Funcs, fdr.UntracedFunc{Reason: fdr.UntracedSmall, Name: fmt.Sprintf("example.com/pkg%d.(*Type).Get", i)})
	}
	leaf := fdr.Untraced{Counts: map[string]int{fdr.UntracedLeaf: 2}, Funcs: []fdr.UntracedFunc{{Reason: fdr.UntracedLeaf, Name: "example.com/p.sum"}, {Reason: fdr.UntracedLeaf, Name: "example.com/p.(*T).Len"}}}
	withUntraced(t, small, leaf)

	for _, v := range []int{5, 1} {
		t.Run(fmt.Sprintf("version%d", v), func(t *testing.T) { untracedFiles(t, v, small.Funcs[0], leaf.Funcs) })
	}
}

func untracedFiles(t *testing.T, version int, firstSmall fdr.UntracedFunc, leaves []fdr.UntracedFunc) {
	c := config(t)
	c.Version = version
	c.BufferSize, c.BufferCount = buffer.MinSize, 4
	startT(t, c)
	var paths []string
	for round := range 3 {
		// Far more records than the ring holds: the first buffers of
		// each round are recycled before its flush.
		for i := range 20000 {
			id := uint32(1 + i%7)
			Enter(id)
			Exit(id)
		}
		if round > 0 && ReadStats().RecycledRecords == 0 {
			t.Fatalf("round %d: the ring recycled nothing", round)
		}
		p, err := Flush()
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	for _, p := range paths {
		u, front := fileUntraced(t, p)
		if !front {
			t.Errorf("%s: untraced events after the first record", p)
		}
		if u.Counts[fdr.UntracedSmall] != 900 || u.Counts[fdr.UntracedInlinable] != 40 || u.Counts[fdr.UntracedLeaf] != 2 {
			t.Errorf("%s: counts %d small, %d inlinable, %d leaf", p, u.Counts[fdr.UntracedSmall], u.Counts[fdr.UntracedInlinable], u.Counts[fdr.UntracedLeaf])
		}
		if len(u.Funcs) != maxUntracedNames || !reflect.DeepEqual(u.Funcs[:2], leaves) || u.Funcs[2] != firstSmall {
			t.Errorf("%s: %d names, first %v", p, len(u.Funcs), u.Funcs[:min(3, len(u.Funcs))])
		}
	}
	for _, name := range []string{"llvm-xray", "llvm-xray-19"} {
		bin := xraytool.NeedExec(t, name, "apt-get install -y llvm llvm-19")
		xraytool.Check(t, bin, paths[len(paths)-1])
	}
}

// TestUntracedEventsFitTheSmallestBuffer: every untraced event fits the
// payload of the smallest buffer a session may use.
func TestUntracedEventsFitTheSmallestBuffer(t *testing.T) {
	if fdr.MaxUntracedPayload > stream.MaxPayload(buffer.MinSize) {
		t.Errorf("MaxUntracedPayload %d > %d", fdr.MaxUntracedPayload, stream.MaxPayload(buffer.MinSize))
	}
}

// TestNoUntracedSetNoEvent: a program instrumented by hand registers
// nothing, and its files carry no untraced event.
func TestNoUntracedSetNoEvent(t *testing.T) {
	withUntraced(t)
	startT(t, config(t))
	Enter(1)
	Exit(1)
	p, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := fileUntraced(t, p); u.Total() != 0 || len(u.Funcs) != 0 {
		t.Errorf("untraced events in a hand-instrumented program's file: %+v", u)
	}
}
