//go:build race

package xray

// The race detector makes each goroutine far more expensive.
const churnGoroutines = 100_000
