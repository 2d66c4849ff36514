package testledger

import (
	"fmt"
	"slices"
	"strings"
)

// Features are the CPU features a ledger entry may need, by their CPUID
// names: what the tests that emulators cannot serve need natively.
var Features = []string{"rdtscp", "rdpid", "invariant-tsc"}

// CPU is the set of Features the machine's CPU has (CPUID), which decides
// the entries with needs (see the package doc).
type CPU map[string]bool

// ParseCPU reads a comma-separated list of Features ("" or "none": none).
func ParseCPU(list string) (CPU, error) {
	cpu := CPU{}
	if list == "" || list == "none" {
		return cpu, nil
	}
	for f := range strings.SplitSeq(list, ",") {
		if !slices.Contains(Features, f) {
			return nil, fmt.Errorf("unknown CPU feature %q (known: %s)", f, strings.Join(Features, ", "))
		}
		cpu[f] = true
	}
	return cpu, nil
}

// String lists the features, in Features' order.
func (c CPU) String() string {
	var has []string
	for _, f := range Features {
		if c[f] {
			has = append(has, f)
		}
	}
	if len(has) == 0 {
		return "none"
	}
	return strings.Join(has, ",")
}

// missing returns the features of needs that c lacks.
func (c CPU) missing(needs []string) []string {
	var out []string
	for _, f := range needs {
		if !c[f] {
			out = append(out, f)
		}
	}
	return out
}

// parseNeeds reads an entry's condition, "" or "[needs f,g]".
func parseNeeds(cond string) ([]string, error) {
	if cond == "" {
		return nil, nil
	}
	list, ok := strings.CutPrefix(cond, "[needs ")
	list, ok2 := strings.CutSuffix(list, "]")
	if !ok || !ok2 || list == "" || list == "none" {
		return nil, fmt.Errorf("want \"[needs feature,…]\" after the test's name, got %q", cond)
	}
	cpu, err := ParseCPU(list)
	if err != nil {
		return nil, err
	}
	var needs []string
	for _, f := range Features {
		if cpu[f] {
			needs = append(needs, f)
		}
	}
	return needs, nil
}
