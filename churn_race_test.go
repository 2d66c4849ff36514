//go:build race

package xray

// The race detector makes each goroutine far more expensive.
const churnGoroutines = 100_000

// Calls per writer of the flight-recorder consistency tests (runConsistency).
const consistencyCalls = 6_000

// raceEnabled: the race detector is on (it makes every goroutine far more
// expensive, and sync.Pool drops a share of what is put back).
const raceEnabled = true
