// Command server is a key-value server in the shape the overhead
// governor must handle: one goroutine per connection reads requests,
// decodes them with a hot parser (a call per field and per number) and
// hands each to a handler, which logs the new value in a write-ahead log
// whose goroutine commits entries in batches, one fsync each, before the
// handler answers. A client goroutine per connection, in the same
// process, sends the requests: the program ends once every client has
// sent its share and read every answer.
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"net"
	"os"
	"strconv"
	"sync"
)

// validate checks a decoded request against the server's limits.
func validate(req *request) error {
	if len(req.key) == 0 || len(req.key) > 64 {
		return fmt.Errorf("key of %d bytes", len(req.key))
	}
	for i := 0; i < len(req.key); i++ {
		if c := req.key[i]; c < '0' || c > 'z' {
			return fmt.Errorf("bad key byte %q", c)
		}
	}
	if len(req.fields) == 0 || len(req.fields) > 1000 {
		return fmt.Errorf("%d fields", len(req.fields))
	}
	return nil
}

type store struct {
	mu     sync.Mutex
	m      map[string]uint64
	wal    chan entry
	hits   map[byte]int
	sizes  [16]int // requests by log2 of their fields' total
	served map[string]int
	log    accessLog
}

// shard is the log shard a key's entries go to: an FNV-1a hash of the
// key, folded, or the key's own number when it ends in one.
func shard(key string, shards int) int {
	if shards <= 0 {
		return 0
	}
	n, digits := 0, 0
	for i := len(key) - 1; i >= 0 && key[i] >= '0' && key[i] <= '9'; i-- {
		digits++
	}
	if digits > 0 && digits < 6 {
		for i := len(key) - digits; i < len(key); i++ {
			n = n*10 + int(key[i]-'0')
		}
		return n % shards
	}
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	h ^= h >> 16
	return int(h % uint32(shards))
}

// accessLog is the last lines of the server's access log.
type accessLog struct {
	mu    sync.Mutex
	lines [256][]byte
	next  int
}

// add logs one served request.
func (l *accessLog) add(client string, req *request, v uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.lines[l.next%len(l.lines)][:0]
	b = append(b, client...)
	b = append(b, ' ', req.op, ' ')
	b = append(b, req.key...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(req.fields)), 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, v, 10)
	l.lines[l.next%len(l.lines)] = b
	l.next++
}

// quota counts a client's requests and refuses one past its limit.
func (s *store) quota(client string, limit int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.served[client] + 1
	s.served[client] = n
	if limit > 0 && n > limit {
		return fmt.Errorf("client %s over its quota of %d requests", client, limit)
	}
	return nil
}

// observe counts a request in the size histogram.
func (s *store) observe(req *request) {
	total := uint64(0)
	for _, f := range req.fields {
		total += f.val & 0xffff
	}
	b := 0
	for total > 1 && b < len(s.sizes)-1 {
		total >>= 1
		b++
	}
	s.mu.Lock()
	s.sizes[b]++
	s.mu.Unlock()
}

// route picks what a request's operation does to the stored value.
func (s *store) route(req *request) (func(old, v uint64) uint64, error) {
	s.mu.Lock()
	s.hits[req.op]++
	s.mu.Unlock()
	switch req.op {
	case 'P':
		return func(_, v uint64) uint64 { return v }, nil
	case 'A':
		return func(old, v uint64) uint64 { return old + v }, nil
	}
	return nil, fmt.Errorf("unknown operation %q", req.op)
}

// authorize checks that the client may write the key: keys are
// client-owned, named after the client's id.
func authorize(req *request, client string) error {
	if len(req.key) < len(client) || req.key[:len(client)] != client {
		return fmt.Errorf("key %q is not %s's", req.key, client)
	}
	for _, f := range req.fields {
		if f.name == "" {
			return errors.New("a field without a name")
		}
	}
	return nil
}

// handle serves one decoded request: it computes the new value, logs it
// in the write-ahead log, waits until the log is on disk and answers.
// It is the function the overhead governor must keep.
func (s *store) handle(req *request, client string, w *bufio.Writer) error {
	if err := authorize(req, client); err != nil {
		return reply(w, "ERR "+err.Error())
	}
	if err := s.quota(client, 1<<30); err != nil {
		return reply(w, "ERR "+err.Error())
	}
	apply, err := s.route(req)
	if err != nil {
		return reply(w, "ERR "+err.Error())
	}
	sum := uint64(0)
	for _, f := range req.fields {
		sum += f.val
	}
	s.mu.Lock()
	old := s.m[req.key]
	v := apply(old, sum)
	s.m[req.key] = v
	s.mu.Unlock()
	done := make(chan error, 1)
	s.wal <- entry{req.key, v, shard(req.key, 8), done}
	if err := <-done; err != nil {
		return err
	}
	s.observe(req)
	s.log.add(client, req, v)
	return answer(w, req.key, v, old)
}

func reply(w *bufio.Writer, s string) error {
	w.WriteString(s)
	w.WriteByte('\n')
	return w.Flush()
}

// answer writes the response line.
func answer(w *bufio.Writer, key string, v, old uint64) error {
	b := w.AvailableBuffer()
	b = append(b, "OK "...)
	b = append(b, key...)
	b = append(b, ' ')
	b = strconv.AppendUint(b, v, 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, old, 10)
	b = append(b, '\n')
	if _, err := w.Write(b); err != nil {
		return err
	}
	return w.Flush()
}

type entry struct {
	key   string
	v     uint64
	shard int
	done  chan error
}

// commit writes the log's entries in batches, each made durable by one
// fsync before its handlers answer.
func commit(f *os.File, in chan entry) {
	var batch []entry
	var buf []byte
	for e := range in {
		batch = append(batch[:0], e)
	more:
		for {
			select {
			case e := <-in:
				batch = append(batch, e)
			default:
				break more
			}
		}
		buf = buf[:0]
		for _, e := range batch {
			buf = encodeEntry(buf, e)
		}
		_, err := f.Write(buf)
		if err == nil {
			err = f.Sync()
		}
		for _, e := range batch {
			e.done <- err
		}
	}
}

// encodeEntry appends e to the log's buffer with its length and checksum.
func encodeEntry(buf []byte, e entry) []byte {
	start := len(buf)
	buf = append(buf, 0, 0, 0, 0, byte(e.shard))
	buf = append(buf, e.key...)
	buf = append(buf, ' ')
	buf = strconv.AppendUint(buf, e.v, 10)
	n := len(buf) - start - 4
	binary.LittleEndian.PutUint32(buf[start:], uint32(n))
	return binary.LittleEndian.AppendUint32(buf, crc32.ChecksumIEEE(buf[start:]))
}

// serve is one connection's goroutine: the first line names the client.
func (s *store) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReaderSize(c, 64<<10)
	w := bufio.NewWriter(c)
	hello, err := r.ReadSlice('\n')
	if err != nil {
		return
	}
	client := string(hello[:len(hello)-1])
	var req request
	for {
		line, err := readRequest(r)
		if err != nil {
			return
		}
		if err := decode(line, &req); err != nil {
			reply(w, "ERR "+err.Error())
			continue
		}
		if err := validate(&req); err != nil {
			reply(w, "ERR "+err.Error())
			continue
		}
		if err := s.handle(&req, client, w); err != nil {
			return
		}
	}
}

// readRequest reads one request line, waiting for the client to send it.
func readRequest(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, errors.New("request line too long")
	}
	if err != nil {
		return nil, err
	}
	if len(line) < 3 {
		return nil, fmt.Errorf("short request %q", line)
	}
	return line, nil
}

func accept(l net.Listener, s *store) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go s.serve(c)
	}
}

// client sends n requests of f fields on one connection and reads each
// answer.
func client(addr string, id, n, f int) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	name := "c" + strconv.Itoa(id)
	if _, err := c.Write([]byte(name + "\n")); err != nil {
		return err
	}
	r := bufio.NewReaderSize(c, 64<<10)
	var line []byte
	for i := range n {
		line = append(line[:0], "PA"[i%2], ' ')
		line = append(line, name...)
		line = strconv.AppendInt(append(line, 'k'), int64(i%16), 10)
		for k := range f {
			line = fmt.Appendf(line, " f%d=%d,%d,-%d,%d", k%16, k*7919+id, k, id, k+i)
		}
		line = append(line, '\n')
		if _, err := c.Write(line); err != nil {
			return err
		}
		resp, err := r.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(resp) < 3 || string(resp[:3]) != "OK " {
			return fmt.Errorf("answer %q", resp)
		}
	}
	return nil
}

func main() {
	conns := flag.Int("conns", 32, "connections")
	reqs := flag.Int("requests", 600, "requests per connection")
	fields := flag.Int("fields", 10, "fields per request")
	walPath := flag.String("wal", "", "the write-ahead log")
	flag.Parse()
	f, err := os.Create(*walPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s := &store{m: map[string]uint64{}, wal: make(chan entry, *conns), hits: map[byte]int{}, served: map[string]int{}}
	go commit(f, s.wal)
	go accept(l, s)
	var wg sync.WaitGroup
	errs := make(chan error, *conns)
	for id := range *conns {
		wg.Go(func() {
			if err := client(l.Addr().String(), id, *reqs, *fields); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	l.Close()
	close(errs)
	for err := range errs {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("served", *conns**reqs)
}
