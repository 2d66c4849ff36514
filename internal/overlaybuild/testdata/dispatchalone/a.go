// Command dispatchalone calls count, a call-free leaf declared alone in
// its file, from walk.
package main

import "fmt"

func walk(b []byte) int {
	t := 0
	for i := range b {
		t += count(b[i:])
	}
	return t
}

func main() { fmt.Println("DISPATCHALONE", walk([]byte("a b c"))) }
