// Command xraydemo is a small instrumented service for `make demo`: worker
// goroutines take jobs from a queue, and each job parses, validates, looks
// up, transforms and stores a record, with real work (hashing, sorting,
// sleeps standing in for I/O) in every step. It runs until it receives
// SIGTERM or -duration passes; SIGUSR1 flushes a trace file meanwhile.
package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/signal"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/goxray/xray"
)

// Function ids: one package-level constant per instrumented function. The
// table is printed at start so the numbers in llvm-xray's output can be read.
const (
	idWorker xray.ID = iota + 1
	idHandle
	idParse
	idValidate
	idLookup
	idTransform
	idSortFields
	idHash
	idStore
	idFlushBatch
)

var names = map[xray.ID]string{
	idWorker: "main.worker", idHandle: "main.handle", idParse: "main.parse",
	idValidate: "main.validate", idLookup: "main.lookup", idTransform: "main.transform",
	idSortFields: "main.sortFields", idHash: "main.hash", idStore: "main.store",
	idFlushBatch: "main.flushBatch",
}

type job struct {
	id      int
	payload []byte
}

type cache struct {
	mu sync.Mutex
	m  map[int][32]byte
}

func main() {
	workers := flag.Int("workers", 8, "worker goroutines")
	duration := flag.Duration("duration", 30*time.Second, "run at most this long")
	dir := flag.String("dir", os.TempDir(), "where trace files go")
	flag.Parse()

	if err := xray.Start(xray.Options{Dir: *dir}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("xraydemo: pid %d, %d workers; `kill -USR1 %d` writes a trace to %s\n", os.Getpid(), *workers, os.Getpid(), *dir)
	for id := idWorker; id <= idFlushBatch; id++ {
		fmt.Printf("  #%-2d %s\n", id, names[id])
	}

	jobs := make(chan job, 64)
	stop := make(chan struct{})
	c := &cache{m: map[int][32]byte{}}
	var wg sync.WaitGroup
	for i := 0; i < *workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker(jobs, c)
		}()
	}
	go func() {
		r := rand.New(rand.NewSource(1))
		for n := 0; ; n++ {
			p := make([]byte, 64+r.Intn(512))
			r.Read(p)
			select {
			case jobs <- job{id: n, payload: p}:
			case <-stop:
				close(jobs)
				return
			}
		}
	}()

	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-term:
	case <-time.After(*duration):
	}
	close(stop)
	wg.Wait()
	st := xray.Stats()
	if err := xray.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop:", err)
		os.Exit(1)
	}
	fmt.Printf("xraydemo: %d records, %d dropped, %d flushes\n", st.Records, st.Drops.Total(), st.Flushes+1)
}

func worker(jobs <-chan job, c *cache) {
	xray.Enter(idWorker)
	defer xray.Exit(idWorker)
	batch := 0
	for j := range jobs {
		handle(j, c)
		if batch++; batch%16 == 0 {
			flushBatch()
		}
	}
}

func handle(j job, c *cache) {
	xray.EnterArgs(idHandle, uint64(j.id), uint64(len(j.payload)))
	defer xray.Exit(idHandle)
	fields := parse(j.payload)
	if !validate(fields) {
		xray.Event([]byte(fmt.Sprintf("job %d rejected", j.id)))
		return
	}
	h := lookup(c, j.id%97, fields)
	store(transform(fields, h))
}

func parse(p []byte) []uint32 {
	xray.Enter(idParse)
	defer xray.Exit(idParse)
	out := make([]uint32, 0, len(p)/4)
	for i := 0; i+4 <= len(p); i += 4 {
		out = append(out, uint32(p[i])|uint32(p[i+1])<<8|uint32(p[i+2])<<16|uint32(p[i+3])<<24)
	}
	return out
}

func validate(f []uint32) bool {
	xray.Enter(idValidate)
	defer xray.Exit(idValidate)
	return len(f) > 0 && f[0]%13 != 0
}

func lookup(c *cache, key int, f []uint32) [32]byte {
	xray.Enter(idLookup)
	defer xray.Exit(idLookup)
	c.mu.Lock()
	h, ok := c.m[key]
	c.mu.Unlock()
	if !ok {
		time.Sleep(200 * time.Microsecond) // a miss goes to the "database"
		h = hash(f)
		c.mu.Lock()
		c.m[key] = h
		c.mu.Unlock()
	}
	return h
}

func transform(f []uint32, h [32]byte) []uint32 {
	xray.Enter(idTransform)
	defer xray.Exit(idTransform)
	for i := range f {
		f[i] ^= uint32(h[i%32])
	}
	sortFields(f)
	return f
}

func sortFields(f []uint32) {
	xray.Enter(idSortFields)
	defer xray.Exit(idSortFields)
	sort.Slice(f, func(i, j int) bool { return f[i] < f[j] })
}

func hash(f []uint32) [32]byte {
	xray.Enter(idHash)
	defer xray.Exit(idHash)
	b := make([]byte, 4*len(f))
	for i, v := range f {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	return sha256.Sum256(b)
}

func store(f []uint32) {
	xray.Enter(idStore)
	defer xray.Exit(idStore)
	_ = hash(f)
}

func flushBatch() {
	xray.Enter(idFlushBatch)
	defer xray.Exit(idFlushBatch)
	time.Sleep(time.Millisecond) // a batched write
}
