//go:build !linux

package settings

import "syscall"

// No real-time signals are offered off Linux: the Go runtime's signal
// tables stop at the classic set on the other Unix systems it supports.
const (
	rtMin syscall.Signal = 0
	rtMax syscall.Signal = 0
)

var platformRefused = map[syscall.Signal]string{}
