package dispatchtestfunc

import "testing"

func max(xs ...int) int {
	m := xs[0]
	for _, x := range xs {
		if x > m {
			m = x
		}
	}
	if m > 1000 {
		m = 1000
	}
	if m < -1000 {
		m = -1000
	}
	return m
}

func TestWalk(t *testing.T) {
	if Walk([]int{1, 2, 3}) == 0 {
		t.Fatal("zero")
	}
}
