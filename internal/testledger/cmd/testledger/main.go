// Command testledger is make test's record of which tests ran where.
//
//	go test -json ... | testledger record -config NAME -o DIR/NAME.jsonl
//	testledger check -ledger .ci/skip-ledger.txt [-cpu FEATURES] DIR/*.jsonl
//
// record prints what a plain go test would and keeps every test's outcome;
// it exits 1 when a test or package failed, so a shell without pipefail
// still fails. check fails when a test was skipped in every configuration
// and the ledger does not list it (see package testledger). It judges the
// ledger's entries with needs by this machine's CPU, as CPUID describes
// it; -cpu names the features instead ("rdtscp,rdpid,invariant-tsc", or
// "none"), to read outcomes from another machine.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/goxray/xray/internal/asm"
	"github.com/goxray/xray/internal/testledger"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "record":
		fs := flag.NewFlagSet("record", flag.ExitOnError)
		config := fs.String("config", "", "the configuration's name (native, purego, arm64, …)")
		out := fs.String("o", "", "file to append the outcomes to")
		fs.Parse(os.Args[2:])
		if *config == "" || *out == "" {
			usage()
		}
		f, err := os.OpenFile(*out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fatal(err)
		}
		failed, err := testledger.Record(*config, os.Stdin, f, os.Stdout)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fatal(err)
		}
		if failed {
			os.Exit(1)
		}
	case "check":
		fs := flag.NewFlagSet("check", flag.ExitOnError)
		ledger := fs.String("ledger", "", "the ledger file")
		features := fs.String("cpu", "", "the CPU's features (default: this machine's, from CPUID)")
		fs.Parse(os.Args[2:])
		if *ledger == "" || fs.NArg() == 0 {
			usage()
		}
		lf, err := os.Open(*ledger)
		if err != nil {
			fatal(err)
		}
		l, err := testledger.ParseLedger(*ledger, lf)
		lf.Close()
		if err != nil {
			fatal(err)
		}
		all, err := testledger.Load(fs.Args()...)
		if err != nil {
			fatal(err)
		}
		cpu := hostCPU()
		if *features != "" {
			if cpu, err = testledger.ParseCPU(*features); err != nil {
				fatal(err)
			}
		}
		r := testledger.Check(all, l, cpu)
		r.Write(os.Stdout, *ledger)
		if !r.OK() {
			os.Exit(1)
		}
	default:
		usage()
	}
}

// hostCPU is what CPUID says of this machine's CPU (nothing off amd64).
func hostCPU() testledger.CPU {
	return testledger.CPU{"rdtscp": asm.HasRDTSCP(), "rdpid": asm.HasRDPID(), "invariant-tsc": asm.InvariantTSC()}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: testledger record -config NAME -o FILE < go-test-json\n       testledger check -ledger FILE [-cpu FEATURES] OUTCOMES...")
	os.Exit(2)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "testledger:", err)
	os.Exit(2)
}
