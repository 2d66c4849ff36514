//go:build !fixturetag

package lib

func Tagged() string { Probe(); return "off" }
