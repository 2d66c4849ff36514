//go:build fixturetag

package lib

func Tagged() string { Probe(); return "on" }
