package lib_test

import (
	"os"
	"testing"

	lib "example.com/fixture.v1/lib.x"
)

func helper(x int) int { return lib.Twice(x) + 1 }

func TestExternal(t *testing.T) {
	if helper(1) != 3 {
		t.Fatal("helper")
	}
	if os.Getenv("FIXTURE_FAIL") != "" {
		t.Errorf("deliberate failure") // FAIL-MARK
	}
}
