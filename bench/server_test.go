package bench

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"runtime/trace"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/gotrace"
)

// The server rows: what Options.GoTrace costs a server, as throughput
// and as the server's CPU per request. A key-value server over loopback
// TCP (one goroutine per connection, a line protocol, a map behind a
// mutex, three traced functions a request) answers serverClients clients
// in another process (this test binary started again as the load
// generator, untraced), each sending its next request when the previous
// answer arrives: every request blocks and wakes the server's goroutines,
// the scheduling events Go's execution tracer records. Each round serves
// serverRequests requests in each configuration, in an order that rotates
// from round to round:
//
//   - on: goxray recording (the default settings), the baseline;
//   - gotrace: the same with Options.GoTrace;
//   - fr: goxray recording beside a runtime/trace.FlightRecorder the
//     benchmark starts itself with the window GoTrace uses: Go's tracer
//     alone, without goxray's part (the anchors, the window's size, the
//     snapshot at each flush);
//   - on again: the A/A, what the machine's noise alone makes of a ratio.
//
// It reports the baseline's requests per second, each configuration's
// throughput over the baseline's as the median over the rounds of each
// round's ratio (x-gotrace, x-fr, x-aa), the same for the server
// process's CPU time per request (cpu-x-gotrace, cpu-x-fr, cpu-x-aa:
// what a loaded machine's wait for a CPU leaves out), and goxray's part of
// GoTrace's cost, the fr configuration's throughput minus gotrace's, as a
// fraction of the baseline's (goxray-part); and the time one flush spends
// writing the Go trace beside its file (gotrace-flush-ms), which GoTrace
// adds to every flush.

const (
	serverClients  = 16
	serverRequests = 8000
	serverKeys     = 1000
	kvLoadEnv      = "GOXRAY_BENCH_KVLOAD" // the server's address, in the load generator
)

// kvServer is the server: GET k and SET k v, one per line.
type kvServer struct {
	ln net.Listener
	mu sync.Mutex
	m  map[string]string
	wg sync.WaitGroup
}

func startKV(b *testing.B) *kvServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s := &kvServer{ln: ln, m: map[string]string{}}
	for k := range serverKeys {
		s.m[strconv.Itoa(k)] = "v" + strconv.Itoa(k)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.serve(c)
			}()
		}
	}()
	return s
}

func (s *kvServer) serve(c net.Conn) {
	defer c.Close()
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		s.handle(w, line)
		if r.Buffered() == 0 && w.Flush() != nil {
			return
		}
	}
}

// handle, get and put are the traced functions, ids 2–4.
func (s *kvServer) handle(w *bufio.Writer, line []byte) {
	xray.Enter(2)
	defer xray.Exit(2)
	if len(line) > 4 && string(line[:4]) == "SET " {
		k, v, _ := cutSpace(line[4 : len(line)-1])
		s.put(string(k), string(v))
		w.WriteString("OK\n")
		return
	}
	if len(line) > 4 && string(line[:4]) == "GET " {
		v, ok := s.get(line[4 : len(line)-1])
		if !ok {
			w.WriteString("NIL\n")
			return
		}
		w.WriteString(v)
		w.WriteByte('\n')
		return
	}
	w.WriteString("ERR\n")
}

func (s *kvServer) get(k []byte) (string, bool) {
	xray.Enter(3)
	defer xray.Exit(3)
	s.mu.Lock()
	v, ok := s.m[string(k)]
	s.mu.Unlock()
	return v, ok
}

func (s *kvServer) put(k, v string) {
	xray.Enter(4)
	defer xray.Exit(4)
	s.mu.Lock()
	s.m[k] = v
	s.mu.Unlock()
}

func cutSpace(b []byte) (before, after []byte, ok bool) {
	for i, c := range b {
		if c == ' ' {
			return b[:i], b[i+1:], true
		}
	}
	return b, nil, false
}

func (s *kvServer) close() {
	s.ln.Close()
	s.wg.Wait()
}

// kvLoadChild is the load generator's main: serverClients connections
// to addr; for each line n on stdin it sends n requests over them (one in
// ten a SET) and prints the requests served per second.
func kvLoadChild(addr string) int {
	cs := make([]net.Conn, serverClients)
	for i := range cs {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		cs[i] = c
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		n, err := strconv.Atoi(in.Text())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		rps, err := kvLoad(cs, n)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(rps)
	}
	return 0
}

func kvLoad(cs []net.Conn, n int) (float64, error) {
	var wg sync.WaitGroup
	errs := make(chan error, len(cs))
	t0 := time.Now()
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			r, w := bufio.NewReader(c), bufio.NewWriter(c)
			for j := range n / len(cs) {
				k := rng.IntN(serverKeys)
				if j%10 == 0 {
					fmt.Fprintf(w, "SET %d v%d\n", k, j)
				} else {
					fmt.Fprintf(w, "GET %d\n", k)
				}
				if err := w.Flush(); err != nil {
					errs <- err
					return
				}
				if _, err := r.ReadSlice('\n'); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	d := time.Since(t0)
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return float64(n/len(cs)*len(cs)) / d.Seconds(), nil
}

// kvLoader is the load generator process, driven over its stdin.
type kvLoader struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startLoader(b *testing.B, addr string) *kvLoader {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), kvLoadEnv+"="+addr)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return &kvLoader{cmd: cmd, in: in, out: bufio.NewScanner(out)}
}

// load has n requests sent and returns the requests served per second.
func (l *kvLoader) load(b *testing.B, n int) float64 {
	fmt.Fprintln(l.in, n)
	if !l.out.Scan() {
		b.Fatalf("the load generator stopped: %v", l.out.Err())
	}
	rps, err := strconv.ParseFloat(l.out.Text(), 64)
	if err != nil {
		b.Fatal(err)
	}
	return rps
}

func (l *kvLoader) stop() {
	l.in.Close()
	l.cmd.Wait()
}

// BenchmarkServerGoTrace: one round per iteration (see above).
func BenchmarkServerGoTrace(b *testing.B) {
	s := startKV(b)
	defer s.close()
	l := startLoader(b, s.ln.Addr().String())
	defer l.stop()
	opts := func(gt bool) xray.Options {
		return xray.Options{Dir: b.TempDir(), FlushSignal: xray.NoSignal, Logf: func(string, ...any) {}, GoTrace: gt, IgnoreEnv: true}
	}
	// The window GoTrace gives the flight recorder, for fr's.
	if err := xray.Start(opts(true)); err != nil {
		b.Fatal(err)
	}
	window := xray.Stats().GoTrace.MaxBytes
	xray.Stop()
	l.load(b, serverRequests) // warm the connections and the server

	configs := []string{"on", "gotrace", "fr", "on2"}
	rps, cpu := map[string][]float64{}, map[string][]float64{}
	var flushes []float64
	run := func(cfg string) {
		var fr *trace.FlightRecorder
		if cfg == "fr" {
			fr = trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: gotrace.MinAge, MaxBytes: window})
			if err := fr.Start(); err != nil {
				b.Fatal(err)
			}
		}
		if err := xray.Start(opts(cfg == "gotrace")); err != nil {
			b.Fatal(err)
		}
		c0 := processCPU()
		rps[cfg] = append(rps[cfg], l.load(b, serverRequests))
		cpu[cfg] = append(cpu[cfg], float64(processCPU()-c0)/serverRequests)
		if cfg == "gotrace" {
			t0 := time.Now()
			if _, err := xray.WriteGoTraceTo(io.Discard); err != nil {
				b.Fatal(err)
			}
			flushes = append(flushes, float64(time.Since(t0).Microseconds())/1000)
		}
		xray.Stop()
		if fr != nil {
			fr.Stop()
		}
	}
	round := 0
	for b.Loop() {
		for i := range configs {
			run(configs[(i+round)%len(configs)])
		}
		round++
	}
	ratio := func(m map[string][]float64, cfg string) float64 {
		var rs []float64
		for i := range m["on"] {
			rs = append(rs, m[cfg][i]/m["on"][i])
		}
		return median(rs)
	}
	var part []float64
	for i := range rps["on"] {
		part = append(part, (rps["fr"][i]-rps["gotrace"][i])/rps["on"][i])
	}
	b.ReportMetric(median(rps["on"]), "on-req/s")
	for _, cfg := range []string{"gotrace", "fr"} {
		b.ReportMetric(ratio(rps, cfg), "x-"+cfg)
		b.ReportMetric(ratio(cpu, cfg), "cpu-x-"+cfg)
	}
	b.ReportMetric(ratio(rps, "on2"), "x-aa")
	b.ReportMetric(ratio(cpu, "on2"), "cpu-x-aa")
	b.ReportMetric(median(part), "goxray-part")
	b.ReportMetric(median(flushes), "gotrace-flush-ms")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
