// Command table turns `go test -bench` output (and the compiler-rt
// harness's, which prints the same format) into the overhead table of
// bench/README.md: the median of each benchmark over its runs and its
// ratio to the hardware floor, all from one invocation.
//
//	go test -C bench -run '^$' -bench . -count 10 . > new.txt
//	go run -C bench ./table < new.txt
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// row is one line of the table: a benchmark and what it measures.
type row struct {
	bench string
	what  string
	perP  bool // RunParallel: ns/op is wall time over all Ps; per call per P is ×procs
	mbps  bool // throughput row: report MB/s, no ratio
	// cpu: a row only some CPUs run (its instructions must be
	// advertised); left out of the table where it did not run.
	cpu bool
	us  bool // a cost per event, not per call: report µs, no ratio
	// metric: report the median of this custom metric of the benchmark
	// (a ratio, or with pct a fraction shown as a percentage), no ratio.
	metric string
	pct    bool
}

var rows = []row{
	{bench: "Floor", what: "floor: two reads of the clock and two 8-byte stores (one assembly loop, no call)"},
	{bench: "FloorRDTSCP", what: "floor, RDTSCP", cpu: true},
	{bench: "FloorRDTSCPChain", what: "floor, RDTSCP, the record path's 5 dependent loads before each store", cpu: true},
	{bench: "FloorLfenceRDTSCChain", what: "floor, LFENCE;RDTSC, the 5 dependent loads", cpu: true},
	{bench: "FloorRDTSC", what: "floor, RDTSC without a fence", cpu: true},
	{bench: "FloorRDPIDRDTSC", what: "floor, RDPID then RDTSC, no fence", cpu: true},
	{bench: "FloorRDPIDRDTSCChain", what: "floor, RDPID then RDTSC, the 5 dependent loads", cpu: true},
	{bench: "EnterExit", what: "goxray on: `xray.Enter(id); xray.Exit(id)`"},
	{bench: "EnterExitFastClock", what: "goxray on, Options.FastClock (RDTSC, no fence)"},
	{bench: "EnterExitGoTrace", what: "goxray on, Options.GoTrace (Go's flight recorder beside)"},
	{bench: "Handoff", what: "traced call handing a token to a goroutine and back (channels)"},
	{bench: "HandoffGoTrace", what: "the same, Options.GoTrace (the Go tracer's cost: 4 scheduling events)"},
	{bench: "EnterArgsExit", what: "goxray on, 2 args: `EnterArgs(id, a, b)` + `Exit`"},
	{bench: "EnterExitParallel", what: "goxray on, parallel (per call on each P)", perP: true},
	{bench: "EnterExitUnpatchedOther", what: "goxray on, another id unpatched (patch check)"},
	{bench: "Event64", what: "goxray custom event, 64-byte payload"},
	{bench: "Disabled", what: "goxray off: Enter+Exit while stopped"},
	{bench: "LoopOverhead", what: "(an empty benchmark loop, included in every row)"},
	{bench: "TraceRegionFlightRecorder", what: "runtime/trace region, FlightRecorder on"},
	{bench: "TraceRegionFullTrace", what: "runtime/trace region, full trace to io.Discard"},
	{bench: "CompilerRTFDR", what: "compiler-rt XRay FDR (clang -fxray-instrument)"},
	{bench: "EnterExitDuringFlush", what: "goxray on while a flush runs"},
	{bench: "Flush64MiB", what: "flush of a 64 MiB snapshot to the page cache", mbps: true},
	{bench: "Flush64MiBFlightRecorder", what: "the same, flight recorder (the window copied first)", mbps: true},
	{bench: "SlowSpan", what: "xrayotel: CPU per slow span (5 calls, full 4 MiB ring), extraction and export", us: true},
	{bench: "RequestSpans/otel", what: "a fast request's 4 spans (a server span, 3 under it) through the SDK's batcher", us: true},
	{bench: "RequestSpans/hold", what: "the same through xrayotel holding the 3 until the root ends (Options.Next), goxray recording", us: true},
	{bench: "ServerGoTrace", metric: "x-gotrace", what: "server (key-value over loopback, 16 clients), goxray on: throughput with Options.GoTrace / without"},
	{bench: "ServerGoTrace", metric: "x-fr", what: "the same, runtime/trace.FlightRecorder alone (GoTrace's window) / without: Go's tracer"},
	{bench: "ServerGoTrace", metric: "goxray-part", pct: true, what: "GoTrace's part that is goxray's (FlightRecorder alone minus GoTrace), of throughput"},
	{bench: "ServerGoTrace", metric: "x-aa", what: "the same server without either, run again / without (A/A)"},
}

var line = regexp.MustCompile(`^Benchmark(\S+?)(-(\d+))?\s+\d+\s+([0-9.]+) ns/op(.*)$`)
var mbLine = regexp.MustCompile(`([0-9.]+) MB/s`)
var metricPair = regexp.MustCompile(`(-?[0-9.eE+-]+) (\S+)`)

func main() {
	procs := flag.Int("procs", 0, "GOMAXPROCS of the run (default: from the -N suffix)")
	flag.Parse()
	ns, mb, met, p, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "table:", err)
		os.Exit(1)
	}
	if *procs > 0 {
		p = *procs
	}
	fmt.Print(render(ns, mb, met, p))
}

// parse collects ns/op and MB/s samples per benchmark name (without the
// -N suffix), the custom metrics' samples per "name metric", and the
// largest -N seen.
func parse(r io.Reader) (ns, mb, met map[string][]float64, procs int, err error) {
	ns, mb, met, procs = map[string][]float64{}, map[string][]float64{}, map[string][]float64{}, 1
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := line.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[4], 64)
		if err != nil {
			return nil, nil, nil, 0, err
		}
		ns[m[1]] = append(ns[m[1]], v)
		if m[3] != "" {
			if n, _ := strconv.Atoi(m[3]); n > procs {
				procs = n
			}
		}
		if mm := mbLine.FindStringSubmatch(m[5]); mm != nil {
			v, _ := strconv.ParseFloat(mm[1], 64)
			mb[m[1]] = append(mb[m[1]], v)
		}
		for _, mm := range metricPair.FindAllStringSubmatch(m[5], -1) {
			if v, err := strconv.ParseFloat(mm[1], 64); err == nil {
				met[m[1]+" "+mm[2]] = append(met[m[1]+" "+mm[2]], v)
			}
		}
	}
	return ns, mb, met, procs, sc.Err()
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func render(ns, mb, met map[string][]float64, procs int) string {
	var b strings.Builder
	floor := 0.0
	if v := ns["Floor"]; len(v) > 0 {
		floor = median(v)
	}
	fmt.Fprintf(&b, "| row | runs | median | × floor |\n| --- | ---: | ---: | ---: |\n")
	for _, r := range rows {
		if r.metric != "" {
			v := met[r.bench+" "+r.metric]
			switch {
			case len(v) == 0:
				fmt.Fprintf(&b, "| %s | 0 | not run | |\n", r.what)
			case r.pct:
				fmt.Fprintf(&b, "| %s | %d | %.1f %% | |\n", r.what, len(v), 100*median(v))
			default:
				fmt.Fprintf(&b, "| %s | %d | %.3f × | |\n", r.what, len(v), median(v))
			}
			continue
		}
		v := ns[r.bench]
		if len(v) == 0 && r.cpu {
			continue
		}
		if len(v) == 0 {
			fmt.Fprintf(&b, "| %s | 0 | not run | |\n", r.what)
			continue
		}
		if r.mbps {
			fmt.Fprintf(&b, "| %s | %d | %.0f MB/s | |\n", r.what, len(mb[r.bench]), median(mb[r.bench]))
			continue
		}
		m := median(v)
		if r.us {
			fmt.Fprintf(&b, "| %s | %d | %.1f µs | |\n", r.what, len(v), m/1e3)
			continue
		}
		if r.perP {
			m *= float64(procs)
		}
		ratio := ""
		if floor > 0 {
			ratio = fmt.Sprintf("%.2f", m/floor)
		}
		fmt.Fprintf(&b, "| %s | %d | %.2f ns | %s |\n", r.what, len(v), m, ratio)
	}
	return b.String()
}
