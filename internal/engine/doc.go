// Package engine is goxray's logging engine: per-P writers that encode
// FDR records into buffers from the buffer queue, the lifecycle (off → on →
// full → off) and the statistics. Package xray is its public face.
//
// # Contract
//
// Enter, Exit, TailExit, EnterArgs, Event and TypedEvent may be called from
// any goroutine at any time; they do nothing unless a session is on. They
// pin the goroutine to its P for the length of one record, so each P's
// writer has exactly one user and needs no synchronisation beyond one
// atomic store that publishes the record to flushers. They never allocate,
// lock or make a system call; taking a new buffer is a lock-free queue
// operation.
//
// Each buffer holds a sequence of FDR blocks laid out as package stream
// says: a new block starts whenever a different goroutine records on the
// P, so every block belongs to one goroutine, and its preamble carries
// the whole goroutine id, the PC of the go statement that started it and
// its parent's id, which the flusher turns into the lineage event. Every
// record is encoded by package fdr's Put* functions, every preamble by
// stream.PutPreamble. Within a buffer TSCs never decrease (a lagging
// CPU's reading is clamped), and a TSCWrap is written when a delta would
// exceed stream.MaxDelta.
//
// Config.Validate is the one place a configuration is checked; Start
// calls it. Adopt lets xray.Start take over a session the environment
// started.
//
// Start times what a record costs (recordcost.go) on a scratch set of
// writers and buffers, installed for the calibration's length before the
// session's own (bench/README.md, "Costs beside the record path", Start): records another goroutine makes meanwhile are lost with
// it, as records made before Start are. The overhead governor
// (governor.go) acts only on its own session: Stop returns once it has,
// and a decision it makes as its session ends sheds nothing in the next.
//
// # When the flight recorder runs short of buffers
//
// Every P that records holds one buffer, so a flight recorder needs
// GOMAXPROCS+SpareBuffers buffers to keep recording on every P at once:
// one to recycle while each P holds its own, one for a P between two
// buffers. With fewer, a P that finds every buffer held drops its records
// (Stats.Drops.Full) until one is sealed, which can be a large share of
// its records (bench/README.md, "Costs beside the record path"). Nothing
// can lend such a P a buffer another P holds without a lock on the record
// path, so the runtime says so instead: the session's watcher calls
// Logf at Start and whenever GOMAXPROCS reaches a new high with too few
// buffers, and xray's default BufferCount covers 2×NumCPU+2, every
// GOMAXPROCS the Go runtime picks by itself. Ps that GOMAXPROCS drops give
// their buffers back within 50 ms (reclaim). Ps that are merely idle would
// keep theirs until a goroutine records on them again, so while buffers
// are short (Acquires failed since its last look) the watcher retires the
// writers whose buffer did not change over its 50 ms period (retireIdle):
// their buffers are sealed and recycled by the busy Ps. Retiring a writer
// costs a stop-the-world (quiesce), at most one per period and only while
// records are being dropped; retired writers are reused, so a session
// never holds more than about twice its largest GOMAXPROCS of them.
// What is left is a P that goes without a buffer until the next look (at
// most ~100 ms), and the case no watcher can help, more Ps recording at
// once than there are buffers.
//
// Each such drop is a hole in one goroutine's records, so only that
// goroutine's window starts after it in later files: lostByG remembers the
// latest drop of up to 8192 goroutines (128 KiB, allocated with the
// session), and a slot is reused once the window's start (the buffer
// queue's LostUpTo) has passed its drop, so a long session never runs out.
// Only when more goroutines drop between two recyclings than the table
// holds does a drop start every goroutine's window after it.
//
// Flush, WriteTo and Stop read every goroutine's stack, so that a file
// shows the calls open across the whole window, which no record in it
// mentions (openstack.go). They read them through Go's execution tracer
// (stackread.go), which pauses the program once, briefly, whatever the
// goroutines, and costs time that grows with the goroutines while the
// program runs (bench/README.md, "Costs beside the record path"); Start reads
// them too, to tell calls that began before it. A call is shown only when
// it provably recorded an Entry. A file says when it may lack such calls
// (fdr.AppendOpenUnknownPayload: stacks too deep, unreadable, or holding
// calls that may have begun untraced), and when it shows none
// (fdr.OpenUnknownPayload: above 100,000 goroutines, when another
// runtime/trace.Start holds the tracer, or when flushes come faster than
// the reads' budget allows, readbudget.go; while a read runs, such a
// Start fails). The shed set goes into every file with what
// the runtime learned when it shed each function (shedset.go), and so
// does what `goxray build` left untraced, as the generated code
// registered it (untraced.go; none for a program instrumented by hand).
//
// # Layout
//
// A session (engine.go) is one Start…Stop period: its configuration, its
// buffer queue (package buffer) and its clock, and one room per concern,
// a struct that owns its fields, with its methods in the files named
// after it:
//   - governor (governor.go, governsample.go; its sheds in shedset.go,
//     gate.go and dispatch.go): the overhead budget, the looks and the
//     sheds;
//   - writerPool (writers.go): every writer the session had, the spares,
//     reclaiming and retiring idle ones; the record path itself is
//     writer.go and the assembly of fast_*.s;
//   - flusher (cut.go, flushapi.go, dirbudget.go): the cut, the copy of
//     the buffers, the files written and Dir's budget;
//   - goTrace (gotrace.go): Go's flight recorder beside the files;
//   - losses (loss.go): the records dropped for want of a buffer, which
//     start later windows.
//
// The package's locks are not a room's: mu orders Start, Stop and every
// snapshot, flushMu one flush at a time, growMu the writer set's growth;
// they outlive any one session.
//
// Start, Stop, Flush and WriteTo may be called concurrently: flushes run
// one at a time, copy the buffers without stopping the writers, and encode
// the copy with package flush. Stop waits for writers already inside a
// record (a stop-the-world cannot start while a goroutine is pinned)
// before it releases the memory.
package engine
