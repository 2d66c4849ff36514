package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/goxray/xray/internal/analysis"
)

// parseArgs parses flags that may come before or after the positional
// arguments, as llvm-xray's options do (`account trace -sort=sum`).
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// mapFlag registers -instr_map and its short form -m.
func mapFlag(fs *flag.FlagSet) *string {
	p := new(string)
	const usage = "instrumentation map: goxray's TRACE.map side file or the compiler-rt binary (default: TRACE.map if it exists)"
	fs.StringVar(p, "instr_map", "", usage)
	fs.StringVar(p, "m", "", "short for -instr_map")
	return p
}

// loadMap reads the map named by flag, or trace+".map" when it exists.
func loadMap(flagVal, trace string) (*analysis.Map, error) {
	p := flagVal
	if p == "" {
		if st, err := os.Stat(trace + ".map"); err == nil && st.Mode().IsRegular() {
			p = trace + ".map"
		} else {
			return nil, nil
		}
	}
	return analysis.ReadMap(p)
}

// openTrace opens a trace for streaming.
func openTrace(path string) (*os.File, *analysis.Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	r, err := analysis.NewReader(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, r, nil
}

// output returns stdout or the file named by -o, and a function that
// finishes writing it.
func output(path string) (io.Writer, func() error, error) {
	if path == "" || path == "-" {
		bw := bufio.NewWriter(os.Stdout)
		return bw, bw.Flush, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	bw := bufio.NewWriter(f)
	return bw, func() error {
		if err := bw.Flush(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}, nil
}

func fail(cmd string, err error) int {
	fmt.Fprintf(os.Stderr, "goxray %s: %v\n", cmd, err)
	return 1
}
