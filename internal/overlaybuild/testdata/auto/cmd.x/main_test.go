package main

import (
	"os"
	"testing"

	lib "example.com/fixture.v1/lib.x"
)

func TestWork(t *testing.T) {
	if work(2) != 4 || work(3) != 9 {
		t.Fatal("work")
	}
	main()
	lib.Report(os.Stdout)
}
