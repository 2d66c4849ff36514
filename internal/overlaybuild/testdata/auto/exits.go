package main

import (
	"fmt"
	"log"
)

// fatalShapes is never called: it is here to be compiled. The exit hooks
// wrap log.Fatal*'s arguments, and every argument shape must still
// compile, multi-valued calls included.
func fatalShapes() {
	log.Fatal(fatalPair())
	log.Fatalln(fatalPair())
	log.Fatalf(fatalFormat())
	log.Fatalf(fmt.Sprint("%d"), 1)
	log.Fatalf(fmt.Sprint("plain"))
	log.Fatal(fmt.Sprint("one"))
}

func fatalPair() (int, error) { return 0, nil }

func fatalFormat() (string, int, error) { return "%d %v", 1, nil }
