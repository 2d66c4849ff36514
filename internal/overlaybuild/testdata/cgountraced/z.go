package main

// z.go sorts after c.go, but the compiler compiles what cgo makes of c.go
// after every other file: this init is main.init.0, c.go's main.init.1.
func init() { seeded++ }
