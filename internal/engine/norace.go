//go:build !race

package engine

func raceAcquire(*writer) {}
func raceRelease(*writer) {}

// raceEnabled: the race detector is on.
const raceEnabled = false
