// Command dispatchcgo calls two methods named scan: sc's, a call-free
// leaf with a loop, and cu's, declared in a cgo file, which the go
// command lists apart from the package's other Go files.
package main

import "fmt"

type sc struct {
	b []byte
	i int
}

func (s *sc) scan() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] != ' ' {
		s.i++
		n++
	}
	return n
}

func walk(s *sc, u *cu) int {
	t := 0
	for s.i < len(s.b) {
		t += s.scan()
		t += u.scan()
		s.i++
	}
	return t
}

func main() {
	fmt.Println("DISPATCHCGO", walk(&sc{b: []byte("ab cd e")}, &cu{}))
}
