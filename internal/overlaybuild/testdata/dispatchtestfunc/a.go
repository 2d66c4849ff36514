// Package dispatchtestfunc calls the builtin max, which its test file
// shadows with a function of its own: the package is compiled with that
// function for its tests and without it for package user.
package dispatchtestfunc

// Walk sums the maxima of b's elements and their indexes.
func Walk(b []int) int {
	t := 0
	for i := range b {
		t += max(b[i], i, 3)
		if t > 100 {
			t -= 7
		}
		if t < -100 {
			t += 7
		}
		if t == 5 {
			t++
		}
	}
	return t
}
