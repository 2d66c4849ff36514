package lib

import "testing"

func TestWork(t *testing.T) {
	if Work(3) != 9 {
		t.Fatal("Work(3)")
	}
	if Twice(2) != 4 {
		t.Fatal("Twice")
	}
}
