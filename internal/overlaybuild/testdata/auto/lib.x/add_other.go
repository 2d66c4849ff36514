//go:build !amd64

package lib

func Add(a, b int) int { Probe(); return a + b }
