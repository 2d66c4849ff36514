package settings

import "syscall"

// The real-time signals as kill -l numbers them: glibc keeps 32 and 33 for
// its threads (musl 32 to 34), so SIGRTMIN is 34 to a C program.
const (
	rtMin syscall.Signal = 34
	rtMax syscall.Signal = 64
)

// platformRefused: the C library's thread signals, which the Go runtime
// forwards to it in a program that uses cgo (setuid calls send one to
// every thread).
var platformRefused = map[syscall.Signal]string{
	32: "the C library's thread cancellation signal",
	33: "the C library's set-id broadcast signal (every setuid call sends it)",
}
