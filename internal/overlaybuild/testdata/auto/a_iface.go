package main

import lib "example.com/fixture.v1/lib.x"

// viaIface reaches an instrumented method through an interface, a call
// initialization order does not see: the id arrays, declared in the
// package's first file, must be initialized before this file's
// variables all the same.
var viaIface = namer.Name()

type named struct{}

func (named) Name() string { lib.Probe(); return "n" }

var namer interface{ Name() string } = named{}
