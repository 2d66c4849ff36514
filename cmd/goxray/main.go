// Command goxray is the one command goxray users run, usually as
// `go tool goxray` after `go get -tool github.com/goxray/xray/cmd/goxray`.
//
// Each subcommand lives in a file of its own and registers itself in an
// init function; main only dispatches.
package main

import (
	"fmt"
	"os"
	"sort"
)

// A command is one subcommand: run gets the arguments after its name and
// returns the process exit code.
type command struct {
	name    string
	summary string // one line for the usage text
	run     func(args []string) int
}

var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("goxray: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: goxray <command> [arguments]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, commands[n].summary)
	}
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "help" || os.Args[1] == "-h" || os.Args[1] == "--help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	c, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "goxray: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	os.Exit(c.run(os.Args[2:]))
}
