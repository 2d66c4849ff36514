// Package interface_test is a directory's only package, an external test
// package whose package under test would be named by a keyword.
package interface_test

import "testing"

func sum(n int) int {
	s := 0
	for i := 1; i <= n; i++ {
		s += i
	}
	return s
}

func TestSum(t *testing.T) {
	if got := sum(3); got != 6 {
		t.Fatalf("sum(3) = %d", got)
	}
}
