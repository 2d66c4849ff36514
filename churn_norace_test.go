//go:build !race

package xray

const churnGoroutines = 1_000_000

// Calls per writer of the flight-recorder consistency tests (runConsistency).
const consistencyCalls = 20_000

// raceEnabled: the race detector is on (it makes every goroutine far more
// expensive, and sync.Pool drops a share of what is put back).
const raceEnabled = false
