package settings

import (
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// refusedSignals cannot serve as a flush trigger (internal/xrayflags
// documents the list and why, for flush_signal). platformRefused adds the platform's own.
var refusedSignals = map[syscall.Signal]string{
	syscall.SIGKILL: "cannot be caught",
	syscall.SIGSTOP: "cannot be caught",
	syscall.SIGINT:  "the process must still end on it (flush_on_exit writes a file first)",
	syscall.SIGTERM: "the process must still end on it (flush_on_exit writes a file first)",
	syscall.SIGQUIT: "the Go runtime's goroutine dump and exit",
	syscall.SIGABRT: "the process must still end on it",
	syscall.SIGXCPU: "the kernel's CPU-limit signal: catching it keeps the process running past its limit",
	syscall.SIGXFSZ: "the kernel's file-size-limit signal, raised by writes (a flush's own among them)",
	syscall.SIGURG:  "the Go runtime's goroutine preemption: it arrives many times a second",
	syscall.SIGPROF: "the Go runtime's CPU profiler: it arrives 100 times a second while profiling",
	syscall.SIGSEGV: "a synchronous fault the Go runtime turns into a panic",
	syscall.SIGBUS:  "a synchronous fault the Go runtime turns into a panic",
	syscall.SIGFPE:  "a synchronous fault the Go runtime turns into a panic",
	syscall.SIGILL:  "a synchronous fault",
	syscall.SIGTRAP: "debuggers use it",
	syscall.SIGSYS:  "a synchronous fault (seccomp)",
	syscall.SIGPIPE: "the Go runtime decides with it whether a write to a closed stdout ends the process",
	syscall.SIGCHLD: "the kernel sends it whenever a child process ends",
	syscall.SIGTSTP: "job control",
	syscall.SIGTTIN: "job control",
	syscall.SIGTTOU: "job control",
	syscall.SIGCONT: "job control",
}

// signalAliases are the other names signals go by (kill -l on Linux and
// the BSDs spells some of these).
var signalAliases = map[string]string{"IOT": "ABRT", "POLL": "IO", "CLD": "CHLD"}

// RefusedSignal reports whether sig may not serve as a flush trigger:
// flush_signal and xray.Options.FlushSignal are held to the same rule.
func RefusedSignal(sig syscall.Signal) bool { return SignalProblem(sig) != "" }

// SignalProblem says why sig cannot serve as a flush trigger, or returns ""
// when it can: a signal the platform has that a process can catch and
// that neither the kernel, the Go runtime nor the C library sends for
// reasons of their own.
func SignalProblem(sig syscall.Signal) string {
	if why, ok := refusedSignals[sig]; ok {
		return why
	}
	if why, ok := platformRefused[sig]; ok {
		return why
	}
	if unix.SignalName(sig) == "" && !(sig >= rtMin && sig <= rtMax && rtMin > 0) {
		return "not a signal of this platform"
	}
	return ""
}

// WantSignal is what flush_signal accepts.
const WantSignal = "a signal name (WINCH, SIGUSR2, RTMIN+3, …) or number a flush may take over, or none"

// parseSignal reads a signal by name (case-insensitive, with or without
// "SIG"; RTMIN+n and RTMAX-n where the platform has real-time signals) or
// by number.
func parseSignal(v string) (syscall.Signal, string) {
	u := strings.TrimPrefix(strings.ToUpper(v), "SIG")
	if u == "NONE" || u == "OFF" {
		return 0, ""
	}
	var sig syscall.Signal
	if n, ok := ParseInt(v, 1, 1<<16); ok {
		sig = syscall.Signal(n)
	} else if s, ok := realtime(u); ok {
		sig = s
	} else {
		if a, ok := signalAliases[u]; ok {
			u = a
		}
		sig = unix.SignalNum("SIG" + u)
	}
	if sig == 0 {
		return 0, WantSignal
	}
	if why := SignalProblem(sig); why != "" {
		return 0, WantSignal + "; " + SignalFlag(sig) + ": " + why
	}
	return sig, ""
}

// realtime reads RTMIN, RTMIN+n, RTMAX and RTMAX-n (without "SIG"), with
// the numbering kill -l uses: the C library's, which keeps the first
// real-time signals for its threads.
func realtime(u string) (syscall.Signal, bool) {
	if rtMin == 0 || len(u) < 5 {
		return 0, false
	}
	base, rest := u[:5], u[5:]
	var s syscall.Signal
	switch {
	case base == "RTMIN" && (rest == "" || rest[0] == '+'):
		s = rtMin
	case base == "RTMAX" && (rest == "" || rest[0] == '-'):
		s = rtMax
	default:
		return 0, false
	}
	if rest != "" {
		n, err := strconv.Atoi(rest[1:])
		if err != nil || n < 0 || n > int(rtMax-rtMin) {
			return 0, false
		}
		if base == "RTMIN" {
			s += syscall.Signal(n)
		} else {
			s -= syscall.Signal(n)
		}
	}
	return s, true
}

// SignalFlag is sig as flush_signal spells it: its name without "SIG",
// RTMIN+n, or its number.
func SignalFlag(sig syscall.Signal) string {
	if sig == 0 {
		return "none"
	}
	if n := unix.SignalName(sig); n != "" {
		return strings.TrimPrefix(n, "SIG")
	}
	if rtMin > 0 && sig >= rtMin && sig <= rtMax {
		return "RTMIN+" + strconv.Itoa(int(sig-rtMin))
	}
	return strconv.Itoa(int(sig))
}
