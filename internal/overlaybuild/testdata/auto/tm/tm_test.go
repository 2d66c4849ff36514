package tm

import (
	"os"
	"testing"
)

var setUp bool

func TestMain(m *testing.M) {
	setUp = true
	os.Exit(m.Run())
}

func TestSum(t *testing.T) {
	if !setUp || Sum(1, 2, 3) != 6 {
		t.Fatal("Sum")
	}
}
