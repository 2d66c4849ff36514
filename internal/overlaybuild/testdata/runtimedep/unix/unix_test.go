package unix

import "testing"

func TestGetpagesize(t *testing.T) {
	if Getpagesize() <= 0 {
		t.Fatal("no page size")
	}
}
