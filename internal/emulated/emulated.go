// Package emulated tells tests whether they run under an emulator.
//
// A process cannot reliably detect user-mode emulation by itself (qemu-user
// passes the host's /proc/cpuinfo through, and answers CPUID for the model
// it emulates), so whoever starts the emulator says so: `make test` sets
// GOXRAY_EMULATOR (e.g. "qemu-x86_64-static -cpu qemu64") for its emulated
// runs. Tests whose assertion cannot hold under emulation (RSS, timing,
// /proc/cpuinfo against CPUID) skip with the reason; none assumes a CPU.
package emulated

import "os"

// Name returns the emulator named by GOXRAY_EMULATOR, or "" when the tests
// run natively.
func Name() string { return os.Getenv("GOXRAY_EMULATOR") }

// Skip is the subset of testing.TB that SkipIf needs.
type Skip interface {
	Helper()
	Skipf(format string, args ...any)
}

// SkipIf skips the test when it runs emulated, giving why.
func SkipIf(t Skip, why string) {
	t.Helper()
	if n := Name(); n != "" {
		t.Skipf("under %s: %s", n, why)
	}
}
