package engine

import (
	"encoding/binary"
	"hash/fnv"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A message-server-shaped workload for BenchmarkGovernorEstimate: each
// message is decoded, looked up in a table larger than the caches,
// checked and answered, by five functions in the shape goxray build
// gives them (a gate test, then a traced copy with Enter and a deferred
// Exit). Its calls are short, as a real server's are, so recording is a
// large share of its CPU time.
const (
	msgHandle = 1701 + iota
	msgHeader
	msgLookup
	msgCheck
	msgReply
)

var msgGates []atomic.Uint32

type msgServer struct {
	state []uint64 // per-user state, far larger than the caches
	table map[string]uint64
	keys  []string
	out   []byte
	sum   uint64
}

func newMsgServer() *msgServer {
	m := &msgServer{table: make(map[string]uint64, 1<<18), state: make([]uint64, 8<<20)}
	for i := range 1 << 18 {
		k := "user:" + strconv.Itoa(i*7919)
		m.table[k] = uint64(i)
		m.keys = append(m.keys, k)
	}
	return m
}

func (m *msgServer) handle(msg []byte) {
	if msgGates[0].Load() != 0 {
		m.handleT(msg)
		return
	}
	m.handleBody(msg)
}

func (m *msgServer) handleT(msg []byte) {
	Enter(msgHandle)
	defer Exit(msgHandle)
	m.handleBody(msg)
}

func (m *msgServer) handleBody(msg []byte) {
	n, key := m.header(msg)
	v := m.lookup(key)
	if m.check(n, v) {
		m.reply(v)
	}
}

func (m *msgServer) header(msg []byte) (uint32, string) {
	if msgGates[1].Load() != 0 {
		return m.headerT(msg)
	}
	return headerBody(msg, m.keys)
}

func (m *msgServer) headerT(msg []byte) (uint32, string) {
	Enter(msgHeader)
	defer Exit(msgHeader)
	return headerBody(msg, m.keys)
}

func headerBody(msg []byte, keys []string) (uint32, string) {
	n := binary.LittleEndian.Uint32(msg)
	h := fnv.New64a()
	h.Write(msg[4:])
	return n, keys[h.Sum64()%uint64(len(keys))]
}

func (m *msgServer) lookup(key string) uint64 {
	if msgGates[2].Load() != 0 {
		return m.lookupT(key)
	}
	return m.table[key]
}

func (m *msgServer) lookupT(key string) uint64 {
	Enter(msgLookup)
	defer Exit(msgLookup)
	return m.table[key]
}

func (m *msgServer) check(n uint32, v uint64) bool {
	if msgGates[3].Load() != 0 {
		return m.checkT(n, v)
	}
	return checkBody(n, v)
}

func (m *msgServer) checkT(n uint32, v uint64) bool {
	Enter(msgCheck)
	defer Exit(msgCheck)
	return checkBody(n, v)
}

func checkBody(n uint32, v uint64) bool { return (uint64(n)^v)%7 != 3 }

// touch reads the state of the user at v: a cache miss, as a server's
// per-user data is.
func (m *msgServer) touch(v uint64) uint64 {
	return m.state[(v*0x9e3779b97f4a7c15)>>40%uint64(len(m.state))]
}

func (m *msgServer) reply(v uint64) {
	if msgGates[4].Load() != 0 {
		m.replyT(v)
		return
	}
	m.replyBody(v)
}

func (m *msgServer) replyT(v uint64) {
	Enter(msgReply)
	defer Exit(msgReply)
	m.replyBody(v)
}

func (m *msgServer) replyBody(v uint64) {
	if m.state != nil {
		v += m.touch(v) + m.touch(v+1)
	}
	m.out = strconv.AppendUint(append(m.out[:0], "ok "...), v, 10)
	m.sum += uint64(len(m.out))
}

// msgRound handles n messages, by conns goroutines each answering the
// batches of messages one connection sends (as a server's connection
// goroutines do), and returns the process CPU time it took.
func msgRound(msgs [][]byte, n int) time.Duration {
	const conns, batch = 16, 1
	c0 := processCPU()
	var wg sync.WaitGroup
	work := make(chan int, conns)
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := srv.Load()
			var local msgServer
			local.table, local.keys, local.state = m.table, m.keys, m.state
			for i := range work {
				for j := range batch {
					local.handle(msgs[(i+j)%len(msgs)])
				}
			}
			msgSink.Add(local.sum)
		}()
	}
	for i := 0; i < n; i += batch {
		work <- i
	}
	close(work)
	wg.Wait()
	return processCPU() - c0
}

var (
	srv     atomic.Pointer[msgServer]
	msgSink atomic.Uint64
)

// BenchmarkGovernorEstimate compares what recording costs the message
// workload (its CPU time traced, with a budget that never sheds, against
// untraced) with what the governor estimates it costs (its records at
// Stats().RecordCost each, as a share of the traced CPU time), with the
// per-user state in memory the caches do not hold ("misses") and without
// it ("compute"). Metrics: measured-%, estimated-% and
// estimate/measured.
func BenchmarkGovernorEstimate(b *testing.B) {
	b.Run("misses", func(b *testing.B) { benchEstimate(b, true) })
	b.Run("compute", func(b *testing.B) { benchEstimate(b, false) })
}

func benchEstimate(b *testing.B, misses bool) {
	if msgGates == nil {
		msgGates = testGates(msgHandle, msgHeader, msgLookup, msgCheck, msgReply)
	}
	m := newMsgServer()
	if !misses {
		m.state = nil
	}
	srv.Store(m)
	msgs := make([][]byte, 1024)
	for i := range msgs {
		msgs[i] = []byte("\x01\x02\x03\x04 GET user profile " + strconv.Itoa(i*31))
	}
	const n = 200_000
	c := config(b)
	c.OverheadBudget = 100
	c.BufferCount = 64
	var plain, traced time.Duration
	var recs uint64
	var rc float64
	var clock, path string
	for range b.N {
		p := msgRound(msgs, n)
		if err := Start(c); err != nil {
			b.Fatal(err)
		}
		r0 := ReadStats().Records
		tr := msgRound(msgs, n)
		st := ReadStats()
		if err := Stop(); err != nil {
			b.Fatal(err)
		}
		if len(st.ShedFuncs) != 0 {
			b.Fatalf("a budget of 100 %% shed %v", st.ShedFuncs)
		}
		plain, traced = plain+p, traced+tr
		recs += st.Records - r0
		rc = st.RecordCost
		clock, path = st.Clock, st.RecordPath
	}
	measured := float64(traced-plain) / float64(traced)
	estimated := min(1, float64(recs)*rc/float64(traced.Nanoseconds()))
	b.ReportMetric(measured*100, "measured-%")
	b.ReportMetric(estimated*100, "estimated-%")
	b.ReportMetric(estimated/measured, "estimate/measured")
	b.ReportMetric(rc, "ns/record-est")
	b.ReportMetric(float64(traced-plain)/float64(recs), "ns/record-measured")
	b.Logf("clock %s, record path %s", clock, path)
}
