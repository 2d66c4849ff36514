package fdr

import (
	"bytes"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// The files in testdata/ are the fuzz targets' seed corpus and inputs of
// TestParseStrictTestdata and TestLLVMXRayInterop:
//
//   - gen-*.xray are written by the encoders through genFile (strict
//     traces with events, arguments, TSC wraps and CPU migrations). Run
//     `go test -run TestTestdataGenerated -update ./fdr/` to rewrite them
//     after changing the generator (or if math/rand/v2 ever changes its
//     output).
//   - runtime-*.xray were written by the goxray runtime (xray.Start, a few
//     goroutines calling Enter/Exit/EnterArgs/Event/TypedEvent, xray.Flush)
//     and are kept as they came out.

var update = flag.Bool("update", false, "rewrite the generated files in testdata/")

type seedSpec struct {
	name string
	seed uint64
	o    genOpts
}

func seedSpecs() []seedSpec {
	base := func(v uint16) genOpts {
		return genOpts{version: v, blocks: 4, tids: []int32{1, 2, 70000}, pids: []int32{4242}, letters: true,
			wallOrder: true, strict: true, maxRecords: 16}
	}
	v1 := base(1)
	v1.bufferSize = 1024
	v1odd := base(1)
	v1odd.bufferSize, v1odd.blocks = 1021, 3
	return []seedSpec{
		{"gen-v1.xray", 1, v1},
		{"gen-v1-odd-size.xray", 2, v1odd},
		{"gen-v2.xray", 3, base(2)},
		{"gen-v3.xray", 4, base(3)},
		{"gen-v4.xray", 5, base(4)},
		{"gen-v5.xray", 6, base(5)},
	}
}

func TestTestdataGenerated(t *testing.T) {
	for _, s := range seedSpecs() {
		t.Run(s.name, func(t *testing.T) {
			g := genFile(rand.New(rand.NewPCG(s.seed, 7)), s.o)
			path := filepath.Join("testdata", s.name)
			if *update {
				if err := os.WriteFile(path, g.data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			have, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(have, g.data) {
				t.Fatalf("%s differs from what the generator writes now; rerun with -update if the generator changed on purpose", path)
			}
			f, err := ParseStrict(have)
			if err != nil {
				t.Fatal(err)
			}
			evs, err := f.Events()
			if err != nil {
				t.Fatal(err)
			}
			compareEvents(t, evs, g.events)
		})
	}
}

// testdataFiles reads every testdata/*.xray file; a missing testdata
// directory fails tb rather than leaving a test with nothing to check.
func testdataFiles(tb testing.TB) []goodFile {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.xray"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no testdata/*.xray files (%v)", err)
	}
	var fs []goodFile
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		fs = append(fs, goodFile{p, data})
	}
	return fs
}
