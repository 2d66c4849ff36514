// Package tsc is the tracer's clock: timestamps for trace records, the CPU
// they were taken on, and the tick frequency and flags the FDR file header
// carries.
//
// Contract:
//
//   - Now returns (ticks, cpu). It is inlinable, allocates nothing, takes no
//     lock and makes no system call. Source names the clock behind it,
//     chosen once at initialisation from what CPUID advertises; no clock
//     ever executes an instruction the CPU does not advertise.
//   - Ticks are comparable across CPUs only when the counter is invariant
//     (Info.ConstantTSC and Info.NonstopTSC); they are reported, not
//     enforced, so the trace header says what the hardware promises.
//   - Probe returns the tick frequency and the counter's flags. The first
//     call takes 10–50 ms (it measures); later calls return the cached
//     result. Call it at tracer start, not on the hot path.
//   - Advertised lists the clocks a session may choose on this CPU;
//     Runnable adds lfence+rdtsc on every x86-64 CPU (its instructions
//     always exist; only without an invariant TSC it is no clock to choose).
//     Tests switch among Runnable with UseForTest, so every clock path the
//     CPU can execute runs on every machine, emulators included.
//
// The clocks, in order of preference (Source; what each costs, and the
// commands that measure it, are in bench/README.md, "The clocks"):
//
//	rdpid+rdtsc         invariant TSC and RDPID: RDPID for the CPU, then RDTSC
//	rdtscp              RDTSCP: TSC and TSC_AUX&0xfff = CPU, one instruction
//	lfence+rdtsc        invariant TSC, neither: CPU unknown
//	rdtsc               on request (Select): RDTSC alone, invariant TSC; CPU unknown
//	lfence+rdtsc+rdpid  never chosen; tests and comparisons only
//	cntvct              arm64: ISB; MRS CNTVCT_EL0 at CNTFRQ_EL0 Hz; CPU unknown
//	nanotime            anything else: runtime nanotime, 1e9 Hz; CPU unknown
//
// Why rdpid+rdtsc before rdtscp. Alone, the two cost about the same. But
// RDTSCP, like LFENCE;RDTSC, waits until every earlier instruction has
// completed, loads included, and the record path has a chain of dependent
// loads (g, m, p, the writer) between its two clock reads: with RDTSCP
// each read waits for the previous record's chain, which the floor rows
// with that chain show (bench/README.md, the Xeon's table: the chain
// costs RDTSCP's floor far more than RDPID;RDTSC's, and Enter+Exit
// follows). An unfenced RDTSC lets the chain run under the read. The price
// is the fast clock's skid (below): a timestamp may be taken before the
// instructions before it finish, usually by tens of cycles, which at
// function granularity is noise, and after dependent cache misses by their
// remaining latency; the recorder never lets a block's time go backwards.
//
// The migration window. RDPID reads the CPU, RDTSC the counter one
// instruction later, so a thread moved between them tags the counter of
// the new CPU with the old CPU's number. A thread moves only through an
// interrupt taken at an instruction boundary (out-of-order execution never
// lets an instruction after the boundary run before it), and the move
// is a context switch, microseconds long. So at most the one record
// straddling a migration carries the CPU it started on; its timestamp is
// the new CPU's, later than anything the old CPU recorded for that
// goroutine; the next record reads the new CPU and the recorder writes
// its NewCPUId, so every later record is tagged right. The straddling
// record's time is off only by the skew between the two CPUs' counters,
// which with an invariant TSC Linux keeps synchronised (it checks at boot
// and through TSC_ADJUST, and stops using the TSC when they differ); this
// clock is chosen only with an invariant TSC. RDTSCP has no window but
// costs the chain its overlap.
//
// Why LFENCE;RDTSC, and why it is the floor where RDTSCP and RDPID are
// hidden. A timestamp must not be taken before the instructions before it
// have finished, or a call's Exit can be stamped while its last loads are
// still in flight. RDTSC alone may execute as soon as it is dispatched,
// and the out-of-order window holds hundreds of instructions: after a
// chain of dependent cache misses an unfenced read precedes the work it
// follows by the chain's remaining latency, microseconds rather than
// cycles (bench/floorpair -skid shows it). The read must wait for earlier
// instructions, as RDTSCP does, and need not hold back later ones. Of the
// orderings an x86-64 CPU without RDTSCP offers (bench/floorpair times
// them): LFENCE;RDTSC gives exactly that (Intel's SDM, RDTSC: it runs
// only after all earlier instructions completed locally); RDTSC;LFENCE
// costs a little less but orders the wrong side (later instructions wait
// for the read, the read does not wait for earlier ones); LFENCE;RDTSC;
// LFENCE also holds back later instructions; MFENCE;LFENCE;RDTSC (what
// Go's runtime.cputicks does without RDTSCP) also drains the store
// buffer, which a timestamp does not need, at a cost bench/floorpair
// shows; and
// CPUID;RDTSC serializes everything and, in a guest, exits to the
// hypervisor. So LFENCE;RDTSC is the cheapest correct read there, and
// bench's floor row on such a CPU is two of them and two stores. The
// record path pays for it in a way the unfenced reads do not: each read
// waits until every instruction before it has completed, so what a
// record does before its read, and what of the previous record is still
// in flight, adds to the floor, while what follows a read runs under its
// latency (internal/engine/fast_amd64.s does before the read only what
// choosing it needs). On AMD,
// LFENCE is dispatch-serializing (so the same reasoning holds) only when
// MSR C001_1029 (DE_CFG) bit 1 is set: Linux sets it on every AMD family
// that has it writable since the Spectre v1 mitigations
// (X86_FEATURE_LFENCE_RDTSC), and Zen 2 and later have it set always; in a
// guest it is the host's setting, which KVM hosts running Linux make. That
// is what this clock relies on on AMD; if the bit were clear, a timestamp
// could be taken a few instructions early, never out of order with
// another RDTSC on the same CPU.
//
// The fast clock. A session may ask for RDTSC alone (Options.FastClock):
// cheaper than the fenced reads, in exchange for skid — the
// counter may be read before the instructions before it finish, or after
// later ones start, so a call's timestamps may be off against the code
// they bracket: usually by tens of cycles, and after dependent cache
// misses by as much as their remaining latency (above; the recorder never
// lets a block's time go backwards, whatever the reads do). For
// function-level latencies of hundreds of nanoseconds and more the usual
// skid is noise; a call that ends in a chain of misses can read shorter
// than it was. It is used only with an invariant TSC, like
// lfence+rdtsc; the CPU is unknown. Where RDPID exists the default clock
// reads the TSC the same way and adds RDPID for the CPU, which costs a
// record a little more than rdtsc alone (bench/README.md, the Xeon's
// RecordOverClock figures), so the fast clock stays an option.
//
// The CPU. With rdpid+rdtsc, rdtscp and lfence+rdtsc+rdpid the cpu Now returns is
// TSC_AUX&0xfff, which Linux loads with the CPU number. The other clocks
// return UnknownCPU (0) every time: RDPID is missing, and the alternatives
// cost too much per record (the getcpu system call, and LSL on Linux's
// per-CPU segment, which the vDSO's getcpu uses, each cost more than the
// whole record: bench/README.md, "The clocks"). So what a trace reader may conclude
// from a NewCPUId record depends on the clock (Stats.Clock, logged at
// Start):
//
//   - rdpid+rdtsc, rdtscp, lfence+rdtsc+rdpid: the records after it, up
//     to the next NewCPUId, were timestamped on that CPU (with rdpid+rdtsc,
//     but for the one record straddling a migration: see above) (the recorder writes a new
//     NewCPUId whenever the CPU changes within a block);
//   - lfence+rdtsc, cntvct, nanotime: nothing about CPUs. The value is 0
//     and the goroutine may have run on any CPU. Time is still right: these
//     clocks are used only when one counter serves all CPUs (an invariant
//     TSC, which Linux checks is synchronised across CPUs; arm64's system
//     counter; the kernel's monotonic clock).
//
// Frequency. In order of preference:
//
//  1. CPUID leaf 0x15 (Intel: crystal Hz × TSC/crystal ratio, when all three
//     values are non-zero), or on arm64 CNTFRQ_EL0;
//  2. the hypervisor timing leaf 0x40000010 (EAX = TSC kHz), when leaf
//     0x40000000 says it exists;
//  3. calibration against CLOCK_MONOTONIC_RAW over 50 ms.
//
// A stated value is trusted only after a 10 ms calibration agrees with it
// within 0.5 %; a value that disagrees is rejected, FrequencySource says so,
// and the calibration continues to 50 ms. CLOCK_MONOTONIC_RAW is the
// reference because it is never slewed by NTP. Each calibration end point is
// the tightest of several (tick, clock, tick) reads taken on one CPU, so the
// system call's latency does not enter the measurement; over 50 ms the
// result is good to a few parts per million, far inside the 0.1 % the
// trace needs. The nanotime clock needs none of this: it is 1e9 Hz.
//
// compiler-rt's XRay runtime, by contrast, reads the frequency from sysfs
// files that most machines lack and then falls back to CLOCK_REALTIME
// nanoseconds with frequency 1e9 (see the project's reference notes).
package tsc
