package xrayauto

import (
	"fmt"
	"strings"

	"github.com/goxray/xray/internal/engine"
)

// RegisterDispatch records the dispatched functions of one package, those
// the build left without a gate test of their own (call-free leaves and
// functions that only their own recursion calls), and their callers, so
// that the overhead governor sheds each with any of its callers (see
// internal/engine's dispatch.go). edges holds one line per function,
// "function\tcaller\tcaller...\n", every name a full function name as
// RegisterTable's tables spell it. Generated code calls it from a
// package-level initializer (`var _ = xrayauto.RegisterDispatch(...)`,
// hence the result). A malformed list (an empty name, a function without
// callers) is a bug in the generator: it panics at initialization.
func RegisterDispatch(pkg, edges string) struct{} {
	if edges == "" {
		return struct{}{}
	}
	var lines [][]string
	for l := range strings.SplitSeq(strings.TrimSuffix(edges, "\n"), "\n") {
		names := strings.Split(l, "\t")
		if len(names) < 2 || strings.ContainsAny(l, " \r") {
			panic(fmt.Sprintf("xray: dispatched functions of %s: bad entry %q (want \"function\\tcaller...\")", pkg, l))
		}
		for _, n := range names {
			if n == "" {
				panic(fmt.Sprintf("xray: dispatched functions of %s: empty name in entry %q", pkg, l))
			}
		}
		lines = append(lines, names)
	}
	for _, names := range lines {
		engine.RegisterDispatch(names[0], names[1:])
	}
	return struct{}{}
}
