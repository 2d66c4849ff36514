// Command slowsvc measures what xrayotel's processor costs a service
// whose requests are now and then slow: a small net/http server on
// loopback, two hand-made spans per request through the OpenTelemetry SDK
// with a batcher (to an exporter that drops the spans): the request's,
// and a client span its query makes; three functions under goxray's
// Enter/Exit, and one request in -every sleeping -sleep, driven by -c
// keep-alive connections for -d. It prints the request rate.
//
//	-mode otel   OpenTelemetry alone (goxray not started)
//	-mode rec    OpenTelemetry alone, goxray recording: the same live
//	             heap as the modes below (goxray's buffers), so the
//	             collector runs as rarely as theirs
//	-mode xray   goxray recording, and xrayotel's processor registered
//	             beside the batcher with a threshold below the slow
//	             requests' length
//	-mode hold   the same, with the batcher as the processor's
//	             Options.Next: every request's client span held until
//	             the request ends, a slow one's put under its query call
//
// scripts/bench-otel.sh runs the modes in interleaved rounds.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/goxray/xray"
	"github.com/goxray/xray/xrayotel"
)

var (
	idParse  = xray.Register("slowsvc.parse")
	idQuery  = xray.Register("slowsvc.query")
	idRender = xray.Register("slowsvc.render")
)

var sink atomic.Uint64

// work is a few hundred nanoseconds of CPU, the stand-in for a real
// function's.
func work(n int) {
	h := uint64(1469598103934665603)
	for i := range n {
		h = (h ^ uint64(i)) * 1099511628211
	}
	sink.Add(h & 1)
}

func parse(q string) int {
	xray.Enter(idParse)
	defer xray.Exit(idParse)
	work(100)
	n, _ := strconv.Atoi(q)
	return n
}

func query(ctx context.Context, tr trace.Tracer, n int, slow time.Duration) int {
	xray.Enter(idQuery)
	defer xray.Exit(idQuery)
	_, span := tr.Start(ctx, "SELECT users", trace.WithSpanKind(trace.SpanKindClient))
	defer span.End()
	work(200)
	if slow > 0 {
		time.Sleep(slow)
	}
	return n * 7
}

func render(w io.Writer, v int) {
	xray.Enter(idRender)
	defer xray.Exit(idRender)
	work(100)
	fmt.Fprintf(w, `{"id":%d}`, v)
}

func main() {
	mode := flag.String("mode", "otel", "otel, rec, xray or hold")
	label := flag.String("label", "", "the mode's name in the output (default: -mode)")
	conns := flag.Int("c", 4, "keep-alive connections")
	dur := flag.Duration("d", 5*time.Second, "measured load time (after a 1 s warm-up)")
	every := flag.Int("every", 500, "one request in this many is slow")
	sleep := flag.Duration("sleep", 35*time.Millisecond, "how long a slow request sleeps")
	threshold := flag.Duration("threshold", 0, "the processor's threshold (default: 6/7 of -sleep, so slow requests are exported)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the measured time here")
	flag.Parse()
	if *mode != "otel" && *mode != "rec" && *mode != "xray" && *mode != "hold" {
		fmt.Fprintln(os.Stderr, "slowsvc: -mode is otel, rec, xray or hold")
		os.Exit(2)
	}
	if *label == "" {
		*label = *mode
	}

	exp := tracetest.NewNoopExporter()
	var opts []sdktrace.TracerProviderOption
	if *mode != "hold" {
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	var proc *xrayotel.SpanProcessor
	if *mode != "otel" {
		dir, err := os.MkdirTemp("", "slowsvc")
		if err != nil {
			fmt.Fprintln(os.Stderr, "slowsvc:", err)
			os.Exit(1)
		}
		defer os.RemoveAll(dir)
		if err := xray.Start(xray.Options{Dir: dir, Program: "slowsvc", FlushSignal: xray.NoSignal, NoFinalFile: true, IgnoreEnv: true}); err != nil {
			fmt.Fprintln(os.Stderr, "slowsvc:", err)
			os.Exit(1)
		}
		defer xray.Stop()
	}
	if *mode == "xray" || *mode == "hold" {
		if *threshold == 0 {
			*threshold = *sleep * 6 / 7
		}
		o := xrayotel.Options{Threshold: *threshold}
		if *mode == "hold" {
			o.Next = sdktrace.NewBatchSpanProcessor(exp)
		}
		proc = xrayotel.NewSpanProcessor(exp, o)
		opts = append(opts, sdktrace.WithSpanProcessor(proc))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	tr := tp.Tracer("slowsvc")

	var n atomic.Uint64
	mux := http.NewServeMux()
	mux.HandleFunc("/users/{id}", func(w http.ResponseWriter, r *http.Request) {
		ctx, span := tr.Start(r.Context(), "GET /users/{id}", trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		var slow time.Duration
		if n.Add(1)%uint64(*every) == 0 {
			slow = *sleep
		}
		v := query(ctx, tr, parse(r.PathValue("id")), slow)
		w.Header().Set("Content-Type", "application/json")
		render(w, v)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "slowsvc:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *conns, DisableCompression: true}}
	url := "http://" + ln.Addr().String() + "/users/"
	var done, failed atomic.Int64
	var measuring atomic.Bool
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := range *conns {
		wg.Go(func() {
			for i := c; ; i += *conns {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := client.Get(url + strconv.Itoa(i%1000))
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if !measuring.Load() {
					continue
				}
				if err != nil || resp.StatusCode != http.StatusOK {
					failed.Add(1)
					continue
				}
				done.Add(1)
			}
		})
	}
	time.Sleep(time.Second)
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			pprof.StartCPUProfile(f)
			defer f.Close()
		}
	}
	cpu0 := cpuTime()
	gc0 := numGC()
	measuring.Store(true)
	start := time.Now()
	time.Sleep(*dur)
	measuring.Store(false)
	el := time.Since(start)
	cpu := cpuTime() - cpu0
	gcs := numGC() - gc0
	pprof.StopCPUProfile()
	close(stop)
	wg.Wait()
	srv.Close()
	tp.ForceFlush(context.Background())
	tp.Shutdown(context.Background())
	line := fmt.Sprintf("MODE %s RPS %.1f REQS %d FAILED %d CPU_US_PER_REQ %.2f GCS %d", *label, float64(done.Load())/el.Seconds(), done.Load(), failed.Load(),
		float64(cpu.Microseconds())/float64(max(done.Load(), 1)), gcs)
	if proc != nil {
		s := proc.Stats()
		line += fmt.Sprintf(" SLOW %d EXPORTED %d DROPPED %d SHED %d HELD %d REPARENTED %d NEARER %d OUTSIDE %d NOT_REPARENTED %d UNHELD %d HOLDING_PEAK %d",
			s.Slow, s.Exported, s.Dropped, s.Shed, s.Held, s.Reparented, s.NearerParent, s.OutsideCalls, s.NotReparented, s.Unheld, s.HoldingPeak)
	}
	fmt.Println(line)
}

// numGC is how many collections have run.
func numGC() uint32 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.NumGC
}

// cpuTime is the process's CPU time (user and system, every thread, the
// load generator's included).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
