//go:build !amd64

// Command floorpair: see main.go; its floors are x86-64 instructions.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "floorpair: x86-64 only")
	os.Exit(1)
}
