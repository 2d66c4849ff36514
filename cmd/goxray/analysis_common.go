package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/goxray/xray/internal/analysis"
	"github.com/goxray/xray/internal/instrmap"
	"github.com/goxray/xray/internal/traceset"
)

// A view is an analysis subcommand: flags, one input, one output. Its
// run is the same for every view: parse the flags (before or after the
// positional arguments), load, then write to standard output or -o, with
// a usage error exiting 2 and any other failure 1.
type view struct {
	name    string
	summary string // one line for goxray's usage text
	usage   string // the usage text above the flags
	elision bool   // it prints whole call paths: its usage explains their bound
	outHelp string // -o's help, when not the usual one
	// flags defines the view's own flags on fs and returns its load: given
	// the positional arguments, it reads the input and returns what
	// writes the output, or errUsage when the arguments do not fit.
	flags func(fs *flag.FlagSet) (load func(pos []string) (write func(io.Writer) error, err error))
}

// errUsage, from a view's load, prints the view's usage and exits 2.
var errUsage = errors.New("usage")

func registerView(v view) {
	register(command{name: v.name, summary: v.summary, run: v.run})
}

func (v view) run(args []string) int {
	fs := flag.NewFlagSet(v.name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, v.usage)
		if v.elision {
			fmt.Fprintln(os.Stderr, elisionHelp)
		}
		fs.PrintDefaults()
	}
	load := v.flags(fs)
	outHelp := v.outHelp
	if outHelp == "" {
		outHelp = "write to this file instead of standard output"
	}
	out := fs.String("o", "", outHelp)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	write, err := load(pos)
	if err == errUsage {
		fs.Usage()
		return 2
	}
	if err == nil {
		err = writeOutput(*out, write)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "goxray %s: %v\n", v.name, err)
		return 1
	}
	return 0
}

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

// oneTrace is the trace of a view that takes exactly one.
func oneTrace(pos []string) (string, error) {
	if len(pos) != 1 {
		return "", errUsage
	}
	return pos[0], nil
}

// elisionHelp ends the usage of the views that print whole call paths.
var elisionHelp = fmt.Sprintf(`
Call paths deeper than %d frames keep their outermost %d and innermost %d
frames around one frame named "[N frames elided]": without the bound a deep
recursion's output grows with its depth squared.`, analysis.MaxFrames, analysis.MaxFrames/2, analysis.MaxFrames/2)

// input is what a view that reads a trace takes from its flags: the
// instrumentation map and the trace id to narrow the view to.
type input struct {
	imap    string
	traceID string
	// requests is -trace's filter, once a scan of the trace found it.
	requests *analysis.RequestFilter
	// shed: list every function the overhead governor shed, not only
	// how many and the first few (-shed).
	shed bool
}

// inputFlags registers -instr_map (and its short form -m), -trace and
// -shed.
func inputFlags(fs *flag.FlagSet) *input {
	in := new(input)
	const usage = "instrumentation map: goxray's TRACE.map side file or the compiler-rt binary (default: TRACE.map if it exists)"
	fs.StringVar(&in.imap, "instr_map", "", usage)
	fs.StringVar(&in.imap, "m", "", "short for -instr_map")
	fs.StringVar(&in.traceID, "trace", "", "narrow the view to the requests of this trace id (32 hex digits, as OpenTelemetry and Jaeger show it): the goroutine each of its spans started on and those started under it, between the span's start and end (xrayotel records them)")
	fs.BoolVar(&in.shed, "shed", false, "list every function the overhead governor shed: when and why, its callers and callees (default: how many, and the first few)")
	return in
}

// loadMap reads -instr_map, or the trace's map beside it when it exists.
func (in *input) loadMap(trace string) (*instrmap.Map, error) {
	p := in.imap
	if p == "" {
		if st, err := os.Stat(trace + traceset.MapSuffix); err == nil && st.Mode().IsRegular() {
			p = trace + traceset.MapSuffix
		} else {
			return nil, nil
		}
	}
	return instrmap.ReadMap(p)
}

// requestFilter scans trace for the requests of -trace, once.
func (in *input) requestFilter(trace string) (*analysis.RequestFilter, error) {
	if in.requests != nil {
		return in.requests, nil
	}
	id, err := analysis.ParseTraceID(in.traceID)
	if err != nil {
		return nil, fmt.Errorf("-trace: %w", err)
	}
	scan := analysis.NewRequestScan(id)
	if err := stream(trace, nil, nil, func(e *analysis.Event) error { scan.Scan(e); return nil }); err != nil {
		return nil, err
	}
	rf, err := scan.Done()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", trace, err)
	}
	in.requests = rf
	return rf, nil
}

// each streams every event of trace (those of -trace's requests when it
// is set) to fn, after calling start (if any) with the reader.
func (in *input) each(trace string, start func(*analysis.Reader), fn func(*analysis.Event) error) error {
	var rf *analysis.RequestFilter
	if in.traceID != "" {
		var err error
		if rf, err = in.requestFilter(trace); err != nil {
			return err
		}
	}
	return stream(trace, rf, start, fn)
}

// stream reads path in bounded memory, keeping the events rf keeps (all
// when it is nil), calls start (if any) with the reader, then fn with each
// event; fn's error ends the stream.
func stream(path string, rf *analysis.RequestFilter, start func(*analysis.Reader), fn func(*analysis.Event) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := analysis.NewReader(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if rf != nil {
		r.Filter = rf.Keeper()
	}
	if start != nil {
		start(r)
	}
	for {
		e, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
}

// writeOutput runs write on standard output, or on the file named by -o,
// and finishes writing it.
func writeOutput(path string, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		bw := bufio.NewWriter(os.Stdout)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
