package xrayauto

import (
	"fmt"
	"strings"

	xrt "github.com/goxray/xray/internal/engine"
)

// RegisterDispatch records the dispatched leaves of one package: small
// call-free leaves whose own body the build left without a gate test,
// whose calls are recorded only from their callers' traced copies
// (through a helper that tests the leaf's gate), while the callers' plain
// bodies call the plain leaf. edges
// holds one line per leaf, "leaf\tcaller\tcaller...\n", every name a full
// function name as RegisterTable's tables spell it. When the overhead
// governor sheds a caller, its calls of the leaf stop being recorded, so
// the runtime sheds the leaf with it and says so (fdr.Shed.With): a file
// never shows the leaf as traced while some of its calls go unrecorded.
// Generated code calls it from a package-level initializer (`var _ =
// xrayauto.RegisterDispatch(...)`, hence the result), which may run
// before or after the package's RegisterTable calls: names are resolved
// when a caller is shed. A malformed list (an empty name, a leaf without
// callers) is a bug in the generator: it panics at initialization.
func RegisterDispatch(pkg, edges string) struct{} {
	if edges == "" {
		return struct{}{}
	}
	var lines [][]string
	for l := range strings.SplitSeq(strings.TrimSuffix(edges, "\n"), "\n") {
		names := strings.Split(l, "\t")
		if len(names) < 2 || strings.ContainsAny(l, " \r") {
			panic(fmt.Sprintf("xray: dispatched leaves of %s: bad entry %q (want \"leaf\\tcaller...\")", pkg, l))
		}
		for _, n := range names {
			if n == "" {
				panic(fmt.Sprintf("xray: dispatched leaves of %s: empty name in entry %q", pkg, l))
			}
		}
		lines = append(lines, names)
	}
	for _, names := range lines {
		xrt.RegisterDispatch(names[0], names[1:])
	}
	return struct{}{}
}
