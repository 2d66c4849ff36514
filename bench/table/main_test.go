package main

import (
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	in := `goos: linux
BenchmarkFloor-2          	31669324	        40.00 ns/op
BenchmarkFloor-2          	31669324	        38.00 ns/op
BenchmarkFloor-2          	31669324	        36.00 ns/op
BenchmarkEnterExit-2      	29322325	        44.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkFloorRDTSCPChain-2	29322325	        57.00 ns/op
BenchmarkEnterExitParallel-2	49229060	        21.00 ns/op
BenchmarkCompilerRTFDR 	20000000	152.00 ns/op
BenchmarkFlush64MiB-2     	      10	  50000000 ns/op	1342.18 MB/s
BenchmarkSlowSpan-2       	   20000	     41234 ns/op	   14413 B/op	      93 allocs/op
BenchmarkRequestSpans/hold-2         	   50000	      9310 ns/op	    4162 B/op	      25 allocs/op
BenchmarkServerGoTrace-2   	       1	7082411374 ns/op	        57.06 gotrace-flush-ms	         0.004 goxray-part	     14852 on-req/s	         0.9397 x-aa	         0.7591 x-fr	         0.7244 x-gotrace
BenchmarkServerGoTrace-2   	       1	7082411374 ns/op	        57.06 gotrace-flush-ms	         0.006 goxray-part	     14852 on-req/s	         0.9997 x-aa	         0.7791 x-fr	         0.7744 x-gotrace
BenchmarkServerGoTrace-2   	       1	7082411374 ns/op	        57.06 gotrace-flush-ms	         0.008 goxray-part	     14852 on-req/s	         1.0197 x-aa	         0.7991 x-fr	         0.7944 x-gotrace
`
	ns, mb, met, procs, err := parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if procs != 2 || len(ns["Floor"]) != 3 || median(ns["Floor"]) != 38 {
		t.Fatalf("procs %d, floor %v", procs, ns["Floor"])
	}
	out := render(ns, mb, met, procs)
	for _, want := range []string{
		"| floor: two reads of the clock and two 8-byte stores (one assembly loop, no call) | 3 | 38.00 ns | 1.00 |",
		"| server (key-value over loopback, 16 clients), goxray on: throughput with Options.GoTrace / without | 3 | 0.774 × | |",
		"| GoTrace's part that is goxray's (FlightRecorder alone minus GoTrace), of throughput | 3 | 0.6 % | |",
		"| the same server without either, run again / without (A/A) | 3 | 1.000 × | |",
		"| goxray on: `xray.Enter(id); xray.Exit(id)` | 1 | 44.00 ns | 1.16 |",
		"| goxray on, parallel (per call on each P) | 1 | 42.00 ns | 1.11 |",
		"| compiler-rt XRay FDR (clang -fxray-instrument) | 1 | 152.00 ns | 4.00 |",
		"| flush of a 64 MiB snapshot to the page cache | 1 | 1342 MB/s | |",
		"| xrayotel: CPU per slow span (5 calls, full 4 MiB ring), extraction and export | 1 | 41.2 µs | |",
		"| the same through xrayotel holding the 3 until the root ends (Options.Next), goxray recording | 1 | 9.3 µs | |",
		"| goxray off: Enter+Exit while stopped | 0 | not run | |",
		"| floor, RDTSCP, the record path's 5 dependent loads before each store | 1 | 57.00 ns | 1.50 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	// Rows of instructions this CPU lacks are left out, not "not run".
	if strings.Contains(out, "floor, RDPID then RDTSC, no fence") {
		t.Errorf("a floor row that did not run is in the table:\n%s", out)
	}
}
