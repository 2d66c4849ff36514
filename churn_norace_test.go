//go:build !race

package xray

const churnGoroutines = 1_000_000

// Calls per writer of the flight-recorder consistency tests (runConsistency).
const consistencyCalls = 20_000

// raceBuild: the race detector is on.
const raceBuild = false
