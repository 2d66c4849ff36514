// Command dispatch walks the words of a text with two call-free leaves
// that loop, so that goxray build traces both: scan, which only walk
// calls, is dispatched from walk's traced copy and keeps no gate of its
// own; count, which main calls too (main is too small to be traced),
// keeps its gate.
package main

import (
	"fmt"
	"os"
	"strings"
)

type sc struct {
	b []byte
	i int
}

// scan skips one word and returns a number made from its length.
func (s *sc) scan(k int) int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] != ' ' {
		s.i++
		n++
	}
	if n > 0 {
		n = n*3 + k
	}
	if n > 1 {
		n = n*3 + k
	}
	if n > 2 {
		n = n*3 + k
	}
	if n > 3 {
		n = n*3 + k
	}
	if n > 4 {
		n = n*3 + k
	}
	if n > 5 {
		n = n*3 + k
	}
	if n > 6 {
		n = n*3 + k
	}
	if n > 7 {
		n = n*3 + k
	}
	if n > 8 {
		n = n*3 + k
	}
	if n > 9 {
		n = n*3 + k
	}
	if n > 10 {
		n = n*3 + k
	}
	if n > 11 {
		n = n*3 + k
	}
	return n
}

// count counts the spaces of b.
func count(b []byte, k int) int {
	n := 0
	for _, c := range b {
		if c == ' ' {
			n++
		}
	}
	if n > 0 {
		n = n*3 + k
	}
	if n > 1 {
		n = n*3 + k
	}
	if n > 2 {
		n = n*3 + k
	}
	if n > 3 {
		n = n*3 + k
	}
	if n > 4 {
		n = n*3 + k
	}
	if n > 5 {
		n = n*3 + k
	}
	if n > 6 {
		n = n*3 + k
	}
	if n > 7 {
		n = n*3 + k
	}
	if n > 8 {
		n = n*3 + k
	}
	if n > 9 {
		n = n*3 + k
	}
	if n > 10 {
		n = n*3 + k
	}
	if n > 11 {
		n = n*3 + k
	}
	return n
}

// walk scans every word of s.b.
func (s *sc) walk() (words, sum int) {
	for s.i < len(s.b) {
		if s.b[s.i] == ' ' {
			s.i++
			continue
		}
		sum += s.scan(words)
		words++
	}
	sum += count(s.b, words)
	if words > 1000 {
		fmt.Println("many words")
	}
	return words, sum
}

func main() {
	s := &sc{b: []byte(strings.Repeat("ab cde f ", 5))}
	w, n := s.walk()
	fmt.Println("DISPATCH", w, n, count(s.b, len(os.Args)))
}
