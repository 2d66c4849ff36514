//go:build !race

package xray

const churnGoroutines = 1_000_000

const raceEnabled = false
