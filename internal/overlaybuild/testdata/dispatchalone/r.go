package main

func count(b []byte) (n int) {
	for _, c := range b {
		if c == ' ' {
			n++
		}
	}
	return
}
