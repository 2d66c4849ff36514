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

// elisionHelp ends the usage of the views that print whole call paths.
var elisionHelp = fmt.Sprintf(`
Call paths deeper than %d frames keep their outermost %d and innermost %d
frames around one frame named "[N frames elided]": without the bound a deep
recursion's output grows with its depth squared.`, analysis.MaxFrames, analysis.MaxFrames/2, analysis.MaxFrames/2)

// mapFlag registers -instr_map and its short form -m.
func mapFlag(fs *flag.FlagSet) *string {
	p := new(string)
	const usage = "instrumentation map: goxray's TRACE.map side file or the compiler-rt binary (default: TRACE.map if it exists)"
	fs.StringVar(p, "instr_map", "", usage)
	fs.StringVar(p, "m", "", "short for -instr_map")
	// Every view that takes a map reads a trace, so -trace comes along.
	fs.StringVar(&traceID, "trace", "", "narrow the view to the requests of this trace id (32 hex digits, as OpenTelemetry and Jaeger show it): the goroutine each of its spans started on and those started under it, between the span's start and end (xrayotel records them)")
	return p
}

// traceID is -trace; requests is the filter found for it, per trace file.
var (
	traceID  string
	requests = map[string]*analysis.RequestFilter{}
)

// requestFilter scans path for the requests of -trace once.
func requestFilter(path string) (*analysis.RequestFilter, error) {
	if f, ok := requests[path]; ok {
		return f, nil
	}
	id, err := analysis.ParseTraceID(traceID)
	if err != nil {
		return nil, fmt.Errorf("-trace: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := analysis.NewReader(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	scan := analysis.NewRequestScan(id)
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		scan.Scan(e)
	}
	rf, err := scan.Done()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	requests[path] = rf
	return rf, nil
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

// openTrace opens a trace for streaming, narrowed to -trace's requests
// when it is set.
func openTrace(path string) (*os.File, *analysis.Reader, error) {
	var rf *analysis.RequestFilter
	if traceID != "" {
		var err error
		if rf, err = requestFilter(path); err != nil {
			return nil, nil, err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	r, err := analysis.NewReader(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if rf != nil {
		r.Filter = rf.Keeper()
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
