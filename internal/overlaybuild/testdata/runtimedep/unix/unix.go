// Package unix stands for golang.org/x/sys/unix, which goxray's runtime
// imports: TestRuntimeImportsRefused makes this directory a module of
// that path.
package unix

// Getpagesize returns a page size.
func Getpagesize() int { return 4096 }
