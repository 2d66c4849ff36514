package lib

// First is initialized, in the first file of the package, by a function
// declared in its last file: the ids of that file must exist already.
var First = late()

// Glob1's literal waits for Glob2's, declared in a later file: the
// compiler numbers them init.func2 and init.func1 in initialization order.
var Glob1 = func() int { Probe(); return Glob2 + 1 }()
