// Package tsc is the tracer's clock: timestamps for trace records, the CPU
// they were taken on, and the tick frequency and flags the FDR file header
// carries.
//
// Contract:
//
//   - Now returns (ticks, cpu). It is inlinable, allocates nothing, takes no
//     lock and makes no system call. With RDTSCP (amd64 CPUs that have it)
//     ticks is the time-stamp counter and cpu is IA32_TSC_AUX & 0xfff (the
//     CPU number; Linux keeps the NUMA node in the bits above). Otherwise
//     ticks is the runtime's monotonic clock in nanoseconds and cpu is 0.
//     The choice is made once at initialisation and Source names it.
//   - Ticks are comparable across CPUs only when the TSC is invariant
//     (Info.ConstantTSC and Info.NonstopTSC); they are reported, not
//     enforced, so the trace header says what the hardware promises.
//   - Probe returns the tick frequency and the TSC flags. The first call
//     takes 10–50 ms (it measures); later calls return the cached result.
//     Call it at tracer start, not on the hot path.
//
// Frequency. In order of preference:
//
//  1. CPUID leaf 0x15 (Intel: crystal Hz × TSC/crystal ratio, when all three
//     values are non-zero);
//  2. the hypervisor timing leaf 0x40000010 (EAX = TSC kHz), when leaf
//     0x40000000 says it exists;
//  3. calibration against CLOCK_MONOTONIC_RAW over 50 ms.
//
// A CPUID value is trusted only after a 10 ms calibration agrees with it
// within 0.5 %; a value that disagrees is rejected, FrequencySource says so,
// and the calibration continues to 50 ms. CLOCK_MONOTONIC_RAW is the
// reference because it is never slewed by NTP. Each calibration end point is
// the tightest of several (TSC, clock, TSC) reads taken on one CPU, so the
// system call's latency does not enter the measurement; over 50 ms the
// result is good to a few parts per million, far inside the 0.1 % the
// trace needs.
//
// compiler-rt's XRay runtime, by contrast, reads the frequency from sysfs
// files that most machines lack and then falls back to CLOCK_REALTIME
// nanoseconds with frequency 1e9 (see the project's reference notes).
//
// arm64 and other architectures use the fallback (runtime nanotime, cpu 0,
// frequency 1e9, constant and nonstop). On arm64 a reader of the virtual
// counter CNTVCT_EL0, whose frequency CNTFRQ_EL0 gives, could replace it
// later; it would also need a way to learn the CPU number.
package tsc
