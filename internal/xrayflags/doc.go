// Package xrayflags reads the XRAY_OPTIONS and XRAY_FDR_OPTIONS
// environment variables the way LLVM compiler-rt's XRay runtime does, so a
// program traced with goxray can be configured with the settings users of
// compiler-rt already know. It only parses: Parse and FromEnv have no side
// effects, print nothing and never fail. Applying the result (starting
// tracing, logging the warnings) is the caller's job.
//
// # Syntax
//
// The sanitizer flag syntax of compiler-rt's sanitizer_common FlagParser:
// name=value pairs separated by any run of spaces, tabs, newlines, ':' or
// ','. A value that begins with ' or " runs to the next identical quote, so
// it may contain separators (xray_logfile_base="/var/tmp/my traces/");
// there are no escapes, and the next flag may follow the closing quote
// without a separator, as in compiler-rt. A value that does not begin with
// a quote ends at the next separator. A flag given twice takes its last
// value.
//
// Booleans are 0, 1, no, yes, false, true (compiler-rt accepts exactly
// these in lower case; case is ignored here). Integers are decimal with an
// optional sign, as strtoll reads them, except that an empty value is an
// error (compiler-rt would silently read it as 0).
//
// # What goes wrong, and what happens then
//
// compiler-rt aborts the process on a missing '=', an unterminated quote or
// a bad value. Here every problem becomes one Warning, one line with no
// newline in it (names and values are quoted with Go escapes), for example
//
//	xray: XRAY_FDR_OPTIONS: unknown flag "bufer_size" (ignored; did you mean "buffer_size"?)
//
// and the flag it concerns is ignored while the rest still applies:
//
//   - unknown flag: ignored (with a hint when the name is close to a known
//     one, or when it belongs in the other variable);
//   - malformed value (buffer_size=abc, a negative size, fdr_version=3):
//     that occurrence is ignored, so an earlier valid occurrence of the same
//     flag, or else the caller's default, applies;
//   - "x" (no '=') or "=5" (no name): the token is ignored;
//   - an unterminated quote: the flag is ignored and so is the rest of the
//     string, which the quote swallowed;
//   - xray_mode=xray-basic or xray-profiling, xray_naive_log=true: those
//     modes do not exist here; the flag is ignored and the environment does
//     not start tracing;
//   - patch_premain=true without FDR mode selected: tracing is not started.
//
// At most 16 warnings are returned for one Parse, then one that says how
// many more problems were found, so a garbage variable cannot flood stderr
// at program start.
//
// # Flags
//
// XRAY_OPTIONS (compiler-rt's xray_flags.inc):
//
//	patch_premain=bool        with FDR mode selected: start tracing at init (Config.Start)
//	xray_mode=string          "xray-fdr" selects FDR mode; other modes are not supported
//	xray_logfile_base=string  file name prefix, may contain a directory ("dir/", "/tmp/t-")
//	verbosity=int             sanitizer common flag; >0 asks for more log lines
//	xray_fdr_log=bool         deprecated: true selects FDR mode when xray_mode is unset
//	xray_fdr_log_func_duration_threshold_us=int
//	                          deprecated: the threshold, used only when
//	                          XRAY_FDR_OPTIONS holds no flag (compiler-rt: is
//	                          empty); otherwise ignored with a warning
//	xray_fdr_log_grace_period_ms, xray_fdr_log_grace_period_us=int   accepted, ignored
//	xray_page_size_override=int                                       accepted, ignored
//	xray_naive_log=bool, xray_naive_log_*=int   basic mode; true is reported as unsupported
//
// XRAY_FDR_OPTIONS (compiler-rt's xray_fdr_flags.inc, then goxray's own).
// Except for grace_period_ms, each flag is the key of one setting in
// internal/settings' Table, whose row parses it into Config.Settings under
// the xray.Options name given here:
//
//	func_duration_threshold_us=int  calls shorter than this are erased (MinDuration)
//	grace_period_ms=int             accepted, ignored
//	buffer_size=int                 bytes per buffer (BufferSize)
//	buffer_max=int                  number of buffers (BufferCount)
//	no_file_flush=bool              Stop writes no final file (NoFinalFile)
//	fdr_version=1|5                 goxray: FDR file version (Version)
//	mode=flight-recorder|fill       goxray: what happens when buffers run out (Mode)
//	flush_signal=USR1|USR2|HUP|none|<number>
//	                                goxray: signal that triggers a flush (FlushSignal;
//	                                none is settings.NoSignal)
//	flush_on_exit=bool              goxray: on SIGTERM or SIGINT, write a final file, then
//	                                die of the signal as the process would have
//	                                (FlushOnExit): with XRAY_OPTIONS alone, the way to
//	                                get a file at exit
//	fast_clock=bool                 goxray: RDTSC without a fence (FastClock)
//	overhead_budget=float|off       goxray: percent of the process's CPU time recording
//	                                may cost, above 0 and at most 100; off is
//	                                settings.NoOverheadBudget (OverheadBudget)
//	go_trace=bool                   goxray: run Go's execution-trace flight recorder and
//	                                write its trace beside every file (GoTrace)
//	dir_max_files=int|none          goxray: at most this many of the program's files in
//	                                the directory, a trace and its map being two
//	                                (DirMaxFiles; none is no bound, 0 is refused)
//	dir_max_bytes=int|none          goxray: at most this many bytes of them (DirMaxBytes)
//
// goxray's own flags live in XRAY_FDR_OPTIONS because they configure the
// FDR writer, which is all goxray has; XRAY_OPTIONS keeps compiler-rt's set
// (plus its sanitizer-common verbosity) so a string that works there means
// the same here.
//
// The grace period exists in compiler-rt because its flush cannot stop the
// writer threads: it finalizes the buffer queue, then sleeps so that
// threads notice and hand their buffers back before it reads them. goxray's
// flush copies every buffer up to the extent its writer has published,
// while writers keep going, and never waits for a thread, so it has nothing
// to wait for. xray_page_size_override tunes compiler-rt's allocator, which
// goxray does not have.
//
// flush_signal takes any signal a flush can own, by name (case-insensitive,
// with or without "SIG": WINCH, SIGALRM, the aliases IOT, POLL and CLD,
// and on Linux RTMIN+n and RTMAX-n numbered as kill -l does, from 34 to
// 64) or by number; "none" (or "off") disables the signal. Refused, with
// the reason in the warning:
//
//   - SIGKILL, SIGSTOP: cannot be caught;
//   - SIGINT, SIGTERM, SIGQUIT, SIGABRT: the process would no longer end
//     on them (flush_on_exit writes a file and then lets them end it);
//   - SIGURG: the Go runtime preempts goroutines with it, many times a
//     second; SIGPROF: its CPU profiler's tick, 100 a second while
//     profiling; either would flush continually;
//   - synchronous faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP,
//     SIGSYS): the runtime turns them into panics, debuggers use TRAP;
//   - SIGPIPE: the runtime decides with it whether a write to a closed
//     standard output ends the process;
//   - SIGCHLD (every child's exit), SIGXCPU and SIGXFSZ (the kernel's
//     resource limits: catching them keeps the process past its limit,
//     and XFSZ is raised by writes, a flush's own included), job control
//     (SIGTSTP, SIGTTIN, SIGTTOU, SIGCONT);
//   - on Linux, 32 and 33: the C library's thread signals, which the Go
//     runtime forwards to it in a program that uses cgo;
//   - numbers that are no signal of the platform (signal.Notify would
//     ignore them silently).
//
// Everything else is accepted: USR1, USR2, HUP, WINCH, ALRM, VTALRM, IO,
// PWR, STKFLT, the real-time signals. Servers commonly own USR1 (log
// reopening) and USR2 or HUP (graceful restart, configuration reload), and
// a signal reaches every listener, so the documentation recommends WINCH
// for daemons: nothing sends it to a process without a terminal, and its
// default action is to do nothing, so a stray kill -WINCH is harmless. (A
// process in the foreground of a terminal gets WINCH when the window is
// resized; each one writes a file, within the directory's budget.)
//
// # Defaults and precedence
//
// Parse reports only what the strings set: Config.Has and Config.Sets tell
// an unset field from a zero one, and defaults are the caller's. The precedence is
//
//	built-in defaults  <  environment  <  Options passed to xray.Start
//
// that is, a field Options leaves at its zero value takes the environment's
// value when the environment sets it, else the built-in default.
//
// The built-in defaults stay goxray's, not compiler-rt's, when the
// environment is used. In particular an unset func_duration_threshold_us
// means 0 (keep every call), not compiler-rt's 5 µs: goxray's default mode
// is a flight recorder that never stops for lack of space, which is what
// the threshold protects compiler-rt's fill-once buffers from; many Go
// functions take less than 5 µs, and a trace that silently lacks them
// misleads more than a larger file does. compiler-rt users who want its
// behaviour write func_duration_threshold_us=5. Likewise buffer_size and
// buffer_max default to goxray's per-P sizing (compiler-rt: 16384 × 100).
//
// xray_logfile_base: compiler-rt names files <base><program>.XXXXXX
// relative to the working directory. When the flag is set, LogfileDir and
// LogfilePrefix split it accordingly (a base without '/' gives the
// directory "."); when it is not, the caller's default directory applies.
// Parse looks at no file: package xray takes a base without a trailing
// '/' that names an existing directory as that directory, and says so.
package xrayflags
