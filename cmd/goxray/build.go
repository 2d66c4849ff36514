package main

import "github.com/goxray/xray/internal/overlaybuild"

func init() {
	for _, verb := range []string{"build", "test", "run"} {
		register(command{name: verb, summary: "go " + verb + " with every function of the main module traced", run: func(a []string) int { return overlaybuild.Run(verb, a) }})
	}
}
