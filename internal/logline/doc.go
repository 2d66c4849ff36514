// Package logline writes goxray's log lines to standard error without
// ever splitting a line of standard output.
//
// goxray logs from its own goroutines (the governor, signal-triggered
// flushes) at moments the program does not choose. When standard error
// and standard output are different files, a line goes out at once. When
// they are the same file (2>&1, a terminal, the pipe go test gives a test
// binary) a line written while the program is halfway through a line of
// its own would land inside it: go test -bench prints a benchmark's name,
// runs it, then prints its result on the same line, and benchstat drops a
// line that something else cut in two. Then:
//
//   - a regular file (go test -c; ./x.test -test.bench . >out 2>&1): the
//     file's last byte says whether a line is open. Lines wait while it is
//     not a newline, checked every 10 ms; after a minute they go out
//     anyway, after a newline of their own.
//   - a pipe, terminal or socket, whose contents cannot be read back: in a
//     Go test binary running benchmarks (-test.bench set), lines wait for
//     Release, which xray.Stop calls (a session never stopped keeps them:
//     Stats and the trace file hold the same facts); in any other program
//     they go out at once, since servers write their output a line at a
//     time.
//
// Each line is one write(2), so it never interleaves with another
// writer's whole line.
package logline
