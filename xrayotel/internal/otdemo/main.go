// Command otdemo is `make demo-otel`: one request, one tree, across three
// services. It builds the services (gateway, api and store, in the
// directories below) with `go tool goxray build`, runs Jaeger v2 (an
// OpenTelemetry Collector distribution) with the Collector's
// tail_sampling processor (jaeger-tail-sampling.yaml: slow traces kept,
// fast ones dropped), starts the services on loopback, each running
// goxray with the Go trace and xrayotel's processor exporting OTLP to
// Jaeger, sends a few fast requests and one slow one, and prints the slow
// request's tree as read back from Jaeger's API: the services' spans, the
// function spans of each service's calls, and the HTTP and gRPC client
// spans under the calls that made them.
//
// The test beside it runs the same pipeline and checks the tree.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/goxray/xray/xrayotel/internal/jaegerapi"
)

// config is one run's settings.
type config struct {
	jaeger, goxray, out string
	fast                int
	threshold, slowDisk time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.jaeger, "jaeger", "", "the jaeger binary (scripts/build-jaeger.sh prints its path)")
	flag.StringVar(&c.goxray, "goxray", "", "the goxray command (default: built from the goxray module)")
	flag.StringVar(&c.out, "out", "", "where the binaries, logs and configuration go (default: a temporary directory)")
	flag.IntVar(&c.fast, "fast", 8, "fast requests before the slow one")
	flag.DurationVar(&c.threshold, "threshold", 400*time.Millisecond, "the services' threshold (the tail sampler's is in its configuration)")
	flag.DurationVar(&c.slowDisk, "slowdisk", 800*time.Millisecond, "how long the slow request's write takes")
	flag.Parse()
	if c.jaeger == "" {
		fmt.Fprintln(os.Stderr, "otdemo: -jaeger is required (scripts/build-jaeger.sh builds it)")
		os.Exit(2)
	}
	if err := demo(c); err != nil {
		fmt.Fprintln(os.Stderr, "otdemo:", err)
		os.Exit(1)
	}
}

// run is what one pipeline run gives: the requests sent and the slow
// trace as Jaeger stores it.
type run struct {
	p        *pipeline
	fast     []request
	slow     request
	slowTree jaegerapi.Trace
}

// setup builds the services and starts Jaeger.
func setup(c config) (*pipeline, error) {
	if c.out == "" {
		d, err := os.MkdirTemp("", "otdemo")
		if err != nil {
			return nil, err
		}
		c.out = d
	} else if err := os.MkdirAll(c.out, 0o755); err != nil {
		return nil, err
	}
	p := &pipeline{out: c.out, bin: filepath.Join(c.out, "bin"), threshold: c.threshold, slowDisk: c.slowDisk}
	if c.goxray == "" {
		bin, err := buildGoxray(c.out)
		if err != nil {
			return nil, err
		}
		c.goxray = bin
	}
	if err := buildServices(c.goxray, p.bin); err != nil {
		return nil, err
	}
	if err := p.startJaeger(c.jaeger); err != nil {
		return nil, err
	}
	return p, nil
}

// serve sends c.fast fast requests and one slow one to running services,
// and reads the slow one back from Jaeger once the tail sampler has
// decided them all.
func (p *pipeline) serve(c config) (*run, error) {
	r := &run{p: p}
	// A first request sets up the connections (HTTP, gRPC) and may take
	// as long as a slow one: not one of the fast ones.
	if _, err := p.checkout("1", false, nil); err != nil {
		return nil, err
	}
	s0, n0, err := p.decisions()
	if err != nil {
		return nil, err
	}
	for i := range c.fast {
		q, err := p.checkout(strconv.Itoa(100+i), false, nil)
		if err != nil {
			return nil, err
		}
		r.fast = append(r.fast, q)
	}
	if r.slow, err = p.checkout("7", true, nil); err != nil {
		return nil, err
	}
	// Every request is a trace decided once: the slow one kept, the fast
	// ones that were fast in fact dropped.
	quick := 0
	for _, q := range r.fast {
		if q.took < c.threshold {
			quick++
		}
	}
	if err := p.waitDecisions(s0+1, n0+float64(quick), 2*time.Minute); err != nil {
		return nil, err
	}
	r.slowTree, err = jaegerapi.FetchTrace(p.query, r.slow.id, time.Minute, func(t jaegerapi.Trace) bool { return complete(t, 3) })
	if err != nil {
		return nil, err
	}
	return r, nil
}

func demo(c config) error {
	p, err := setup(c)
	if err != nil {
		return err
	}
	defer p.close()
	if err := p.startServices(false); err != nil {
		return err
	}
	r, err := p.serve(c)
	if err != nil {
		return err
	}
	counters, err := p.stopServices()
	if err != nil {
		return err
	}
	fmt.Printf("%d fast requests of GET /checkout and one slow, through gateway → api (HTTP) → store (gRPC, fsync),\n", len(r.fast))
	fmt.Println("each service built with go tool goxray build and exporting to Jaeger v2 with tail sampling")
	fmt.Println("(xrayotel/internal/otdemo/jaeger-tail-sampling.yaml: traces of 400 ms or more kept, and those asking with tracestate goxray=keep).")
	fmt.Printf("The slow request's trace %s, as Jaeger's API returns it (GET /api/traces/%s):\n", r.slow.id, r.slow.id)
	printTree(os.Stdout, r.slowTree)
	gone := 0
	for _, q := range r.fast {
		if _, found, err := jaegerapi.Get(p.query, q.id); err == nil && !found {
			gone++
		}
	}
	fmt.Printf("The %d fast requests' traces: %d not in Jaeger (dropped by the tail sampler).\n", len(r.fast), gone)
	for _, name := range services {
		fmt.Printf("%s's %s\n", name, counters[name])
	}
	fmt.Println("A fast request is captured in every service started with -keep (xrayotel.Options.KeepTraceState) by")
	fmt.Println("  curl -H 'traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' -H 'tracestate: goxray=keep' 'http://GATEWAY/checkout?user=42'")
	return nil
}
