//go:build race

package xray

// The race detector makes each goroutine far more expensive.
const churnGoroutines = 100_000

// raceEnabled: sync.Pool drops a share of what is put back under the race
// detector, so reuse cannot be measured.
const raceEnabled = true
