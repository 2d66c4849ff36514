// Package cpu stands for golang.org/x/sys/cpu, which goxray's runtime
// imports.
package cpu
