// Command writeautodemo writes the automatically instrumented demo,
// internal/cmd/xraydemo without its goxray lines, for make demo:
//
//	go run ./internal/autodemo/cmd/writeautodemo internal/cmd/xraydemo DIR
package main

import (
	"fmt"
	"os"

	"github.com/goxray/xray/internal/autodemo"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: writeautodemo XRAYDEMO_DIR DIR")
		os.Exit(2)
	}
	if err := autodemo.Write(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "writeautodemo:", err)
		os.Exit(1)
	}
}
