package fdr

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"
	"testing/iotest"
)

// readAll reads every event of data with a Reader fed by wrap(data), as
// File.Events would return them (copies, Args nil when empty), and the
// error that ended the read (nil at io.EOF).
func readAll(data []byte, wrap func(io.Reader) io.Reader) ([]Event, error) {
	r, err := NewReader(wrap(bytes.NewReader(data)))
	if err != nil {
		return nil, err
	}
	var evs []Event
	for {
		e, err := r.Next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		c := *e
		c.Args, c.Data = nil, nil
		if len(e.Args) > 0 {
			c.Args = append([]uint64(nil), e.Args...)
		}
		if e.Data != nil {
			c.Data = append([]byte(nil), e.Data...)
		}
		evs = append(evs, c)
	}
}

var readerFeeds = []struct {
	name string
	wrap func(io.Reader) io.Reader
}{
	{"whole", func(r io.Reader) io.Reader { return r }},
	{"byte by byte", iotest.OneByteReader},
	{"half reads", iotest.HalfReader},
}

// pidAfterEndOfBuffer reports whether a version 1 block holds a PID record
// among the records ignored after its EndOfBuffer. File keys such a block
// by that PID, as llvm-xray does; a Reader cannot know a block's key
// before its end, and keys the block by the PID current when each record
// is read. The two then differ only in the pid of events of a later block
// of the same key that has no PID record of its own.
func pidAfterEndOfBuffer(f *File) bool {
	if f.Header.Version != 1 {
		return false
	}
	for _, b := range f.Blocks {
		ended := false
		for _, r := range b.Records {
			ended = ended || r.IsMetadata && r.Kind == KindEndOfBuffer
			if ended && r.IsMetadata && r.Kind == KindPID {
				return true
			}
		}
	}
	return false
}

// checkReader checks that a Reader gives what Parse gives for data: the
// same events for a file Parse accepts, the same decoding error for one
// it rejects while decoding.
func checkReader(t *testing.T, data []byte) {
	t.Helper()
	f, perr := Parse(data)
	var want []Event
	if perr == nil {
		if pidAfterEndOfBuffer(f) {
			return
		}
		var err error
		if want, err = f.Events(); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if want[i].Data != nil {
				want[i].Data = append([]byte(nil), want[i].Data...)
			}
		}
	}
	var pfe *FormatError
	errors.As(perr, &pfe)
	for _, feed := range readerFeeds {
		got, err := readAll(data, feed.wrap)
		if perr == nil {
			if err != nil {
				t.Fatalf("%s: Reader: %v; Parse accepts the file", feed.name, err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s: Reader gives %d events, File.Events %d", feed.name, len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("%s: event %d\n got %+v\nwant %+v", feed.name, i, got[i], want[i])
				}
			}
			continue
		}
		switch pfe.Rule {
		case RuleTransition, RuleBlockEnd, RuleNoBlocks:
			// The block grammar, which Reader does not check.
			if err != nil {
				t.Fatalf("%s: Reader: %v; Parse rejects the file for its grammar only (%v)", feed.name, err, perr)
			}
			continue
		}
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Rule != pfe.Rule || fe.Offset != pfe.Offset {
			t.Fatalf("%s: Reader: %v; Parse: %v", feed.name, err, perr)
		}
	}
}

func TestReaderMatchesParse(t *testing.T) {
	files := append(testdataFiles(t), quirkFiles()...)
	for _, b := range badFiles() {
		files = append(files, goodFile{"bad: " + b.name, b.data})
	}
	for _, v := range []uint16{5, 4, 3, 2, 1} {
		for seed := range uint64(4) {
			rng := rand.New(rand.NewPCG(seed, 900+uint64(v)))
			g := genFile(rng, genOpts{version: v, blocks: 1 + rng.IntN(12), tids: []int32{1, 2, 3},
				pids: []int32{100, 200}, padding: true})
			files = append(files, goodFile{fmt.Sprintf("generated v%d seed %d", v, seed), g.data})
		}
	}
	for _, gf := range files {
		t.Run(gf.name, func(t *testing.T) { checkReader(t, gf.data) })
	}
}

func TestReaderShortInput(t *testing.T) {
	for n, want := range map[int]string{0: "empty file", 10: "10 bytes, shorter than the 32-byte XRay file header"} {
		_, err := NewReader(bytes.NewReader(make([]byte, n)))
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Rule != RuleHeaderSize || !bytes.Contains([]byte(fe.Msg), []byte(want)) {
			t.Errorf("%d bytes: %v, want a header-size error saying %q", n, err, want)
		}
	}
	_, err := NewReader(bytes.NewReader(header(6)))
	checkFormatError(t, err, 0, RuleHeaderVersion)
}

// TestReaderLargeEvent: an event payload larger than the window grows it.
func TestReaderLargeEvent(t *testing.T) {
	payload := bytes.Repeat([]byte("xray"), readWindow/2)
	data := v5file(preamble(1, 100, 0, 1000), fn(Enter, 1, 1), AppendCustomEvent(nil, 2, payload), fn(Exit, 1, 1))
	checkReader(t, data)
}

// TestReaderFilter: Next skips the events Filter rejects.
func TestReaderFilter(t *testing.T) {
	data := v5file(preamble(1, 100, 0, 1000), fn(Enter, 1, 1), fn(Enter, 2, 1), fn(Exit, 2, 1), fn(Exit, 1, 1))
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	r.Filter = func(e *Event) bool { return e.FuncID == 2 }
	var got []string
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%v%d", e.Type, e.FuncID))
	}
	if want := []string{"Enter2", "Exit2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestReaderMatchesParseMutants runs checkReader on the seed files with a
// few bytes changed, which reaches the decoding errors and the stray
// records of every version.
func TestReaderMatchesParseMutants(t *testing.T) {
	var seeds [][]byte
	for _, g := range append(testdataFiles(t), quirkFiles()...) {
		seeds = append(seeds, g.data)
	}
	n := 600
	if testing.Short() {
		n = 100
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range n {
		data := bytes.Clone(seeds[rng.IntN(len(seeds))])
		for k := rng.IntN(4); k >= 0; k-- {
			data[HeaderSize+rng.IntN(len(data)-HeaderSize)] = byte(rng.Uint32())
		}
		checkReader(t, data)
	}
}

func TestLooksLikeHeader(t *testing.T) {
	for v := range uint16(8) {
		h := header(v)
		if got, want := LooksLikeHeader(h[:HeaderPrefixSize]), v >= MinVersion && v <= MaxVersion; got != want {
			t.Errorf("version %d: %v, want %v", v, got, want)
		}
	}
	basic := header(3)
	basic[2] = 0
	for _, b := range [][]byte{nil, header(5)[:3], basic, []byte("main;f 10\n")} {
		if LooksLikeHeader(b) {
			t.Errorf("%q looks like a header", b)
		}
	}
}
