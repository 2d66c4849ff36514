package testledger

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"
)

// outcomes builds the outcomes of tests by configuration: each test's
// configurations that passed and those that skipped.
func outcomes(tests map[Key][2][]string) map[Key][]Outcome {
	all := map[Key][]Outcome{}
	for k, by := range tests {
		for _, c := range by[0] {
			all[k] = append(all[k], Outcome{Config: c, Action: "pass"})
		}
		for _, c := range by[1] {
			all[k] = append(all[k], Outcome{Config: c, Action: "skip", Reason: "skipped in " + c})
		}
	}
	return all
}

func keys(ks []Key) []string {
	var out []string
	for _, k := range ks {
		out = append(out, k.Test)
	}
	return out
}

var (
	native   = []string{"race", "llvm-xray-19"}
	emulated = []string{"qemu64", "qemu-max"}
)

const cpuLedger = `./internal/asm TestAux [needs rdtscp]: emulators keep no TSC_AUX per CPU
./internal/engine TestMigrate/rdtscp [needs rdtscp]: emulators keep no TSC_AUX per CPU
./internal/engine TestMigrate/rdpid [needs rdpid]: emulators keep no TSC_AUX per CPU
./internal/asm TestReads [needs rdtscp,invariant-tsc]: only an invariant TSC is a clock
`

// hidden: a CPU whose CPUID hides RDTSCP and RDPID; qemu -cpu max
// advertises RDTSCP, so the subtest for it appears there and skips.
var hidden = outcomes(map[Key][2][]string{
	{mod + "/internal/asm", "TestAux"}:               {nil, append(native, emulated...)},
	{mod + "/internal/asm", "TestReads"}:             {nil, append(native, emulated...)},
	{mod + "/internal/engine", "TestMigrate"}:        {[]string{"qemu-max"}, append(native, "qemu64")},
	{mod + "/internal/engine", "TestMigrate/rdtscp"}: {nil, []string{"qemu-max"}},
})

// advertised: a CPU with RDTSCP, RDPID and an invariant TSC runs them
// natively.
var advertised = outcomes(map[Key][2][]string{
	{mod + "/internal/asm", "TestAux"}:               {native, emulated},
	{mod + "/internal/asm", "TestReads"}:             {native, emulated},
	{mod + "/internal/engine", "TestMigrate"}:        {append(native, "qemu-max"), []string{"qemu64"}},
	{mod + "/internal/engine", "TestMigrate/rdtscp"}: {native, []string{"qemu-max"}},
	{mod + "/internal/engine", "TestMigrate/rdpid"}:  {native, nil},
})

// TestNeedsJudgedByTheCPU: an entry with needs excuses its test, skipped
// everywhere or never made, only on a CPU that lacks what it needs, and
// the report says once what the CPU lacks and what it kept from running;
// on a CPU with it all, the entry excuses nothing and the test must run.
func TestNeedsJudgedByTheCPU(t *testing.T) {
	l := ledger(t, cpuLedger)
	r := Check(hidden, l, CPU{"invariant-tsc": true})
	if !r.OK() {
		t.Fatalf("hidden CPU: unlisted %v, absent %v", r.Unlisted, r.Absent)
	}
	if got, want := keys(r.ByCPU), []string{"TestAux", "TestReads", "TestMigrate/rdtscp"}; !slices.Equal(got, want) || !slices.Equal(r.Lacks, []string{"rdtscp"}) {
		t.Errorf("by the CPU: %v lacking %v, want %v lacking [rdtscp]", got, r.Lacks, want)
	}
	if len(r.Ran) != 0 {
		t.Errorf("notes on a CPU that lacks what they need: %v", r.Ran)
	}
	var w bytes.Buffer
	r.Write(&w, "ledger.txt")
	if strings.Count(w.String(), "this CPU lacks rdtscp (CPUID)") != 1 || strings.Contains(w.String(), "FAIL") {
		t.Errorf("the CPU's reason is not stated once, or something failed:\n%s", w.String())
	}
	if r := Check(hidden, l, CPU{}); !r.OK() || !slices.Equal(r.Lacks, []string{"rdtscp", "invariant-tsc"}) {
		t.Errorf("no features: OK %v, lacks %v", r.OK(), r.Lacks)
	}

	all := CPU{"rdtscp": true, "rdpid": true, "invariant-tsc": true}
	r = Check(advertised, l, all)
	if !r.OK() || len(r.ByCPU) != 0 || len(r.Ran) != 0 {
		t.Errorf("advertised CPU: OK %v, by the CPU %v, notes %v", r.OK(), r.ByCPU, r.Ran)
	}
	// Where the CPU has what they need, tests that skip everywhere fail.
	r = Check(hidden, l, all)
	if r.OK() || len(r.Unlisted) != 3 || len(r.ByCPU) != 0 {
		t.Fatalf("tests that should have run natively: unlisted %v, by the CPU %v", r.Unlisted, r.ByCPU)
	}
	w.Reset()
	r.Write(&w, "ledger.txt")
	if !strings.Contains(w.String(), "FAIL: ./internal/asm TestReads was skipped in every configuration") ||
		!strings.Contains(w.String(), "ledger.txt excuses it only on a CPU that lacks rdtscp or invariant-tsc (CPUID); this one does not") {
		t.Errorf("report does not say why the entry does not apply:\n%s", w.String())
	}
	// An entry with needs still names a test: one whose test never
	// appeared at all is stale, whatever the CPU.
	l = ledger(t, cpuLedger+"./internal/engine TestGone/rdpid [needs rdpid]: renamed\n")
	for _, cpu := range []CPU{{}, all} {
		if r := Check(hidden, l, cpu); r.OK() || len(r.Absent) != 1 || r.Absent[0].Test != "TestGone/rdpid" {
			t.Errorf("CPU %v: absent %v, want TestGone/rdpid", cpu, r.Absent)
		}
	}
}

func TestNeedsSyntax(t *testing.T) {
	l := ledger(t, "./internal/asm TestX [needs invariant-tsc,rdtscp]: reason: with a colon\n")
	k := Key{mod + "/internal/asm", "TestX"}
	if !slices.Equal(l.Needs[k], []string{"rdtscp", "invariant-tsc"}) || l.Reasons[k] != "reason: with a colon" {
		t.Errorf("needs %v, reason %q", l.Needs[k], l.Reasons[k])
	}
	for _, bad := range []string{
		"./internal/asm TestX [needs avx]: reason\n",
		"./internal/asm TestX [needs]: reason\n",
		"./internal/asm TestX [need rdtscp]: reason\n",
		"./internal/asm TestX needs rdtscp: reason\n",
		"./internal/asm TestX [needs rdtscp]:\n",
	} {
		if _, err := ParseLedger("l", strings.NewReader(bad)); err == nil {
			t.Errorf("ledger %q accepted", bad)
		}
	}
	if _, err := ParseCPU("rdtscp,avx"); err == nil {
		t.Error("ParseCPU accepted an unknown feature")
	}
	if c, err := ParseCPU("none"); err != nil || c.String() != "none" {
		t.Errorf("ParseCPU(none) = %v, %v", c, err)
	}
}

// TestRepositoryLedgerOnBothCPUs: the repository's ledger passes on what
// make test's configurations do with the CPU-bound tests on a CPU that
// hides RDTSCP and RDPID (an AMD EPYC KVM guest: outcomes as recorded
// there) and on one that advertises them with an invariant TSC (an Intel
// Ice Lake: natively the race, purego, llvm-xray-19 and Go 1.27 runs take
// RDTSCP and RDPID, except purego, whose build has no CPUID).
func TestRepositoryLedgerOnBothCPUs(t *testing.T) {
	f, err := os.Open("../../.ci/skip-ledger.txt")
	if err != nil {
		t.Fatal(err)
	}
	l, err := ParseLedger(f.Name(), f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	nat := []string{"race", "purego", "llvm-xray-19", "go1.27.3"}
	cpuNat := []string{"race", "llvm-xray-19", "go1.27.3"}
	others := []string{"purego", "arm64", "qemu64", "qemu-max"}
	asm, engine := mod+"/internal/asm", mod+"/internal/engine"
	realmod := Key{mod + "/cmd/goxray", "TestRealModules"}
	for _, m := range []struct {
		name  string
		cpu   CPU
		tests map[Key][2][]string
		byCPU []string
	}{
		{"hidden", CPU{"invariant-tsc": true}, map[Key][2][]string{
			realmod:                                            {nil, nat},
			{asm, "TestRDTSCPAuxIsCPU"}:                        {nil, append(slices.Clone(nat), "arm64", "qemu64", "qemu-max")},
			{asm, "TestRDPIDIsCPU"}:                            {nil, append(slices.Clone(nat), "arm64", "qemu64", "qemu-max")},
			{asm, "TestTSCReadsAgree"}:                         {nil, append(slices.Clone(nat), "arm64", "qemu64", "qemu-max")},
			{engine, "TestCPUMigrationWithAffinity"}:           {[]string{"qemu-max"}, append(slices.Clone(nat), "arm64", "qemu64")},
			{engine, "TestCPUMigrationWithAffinity/rdtscp"}:    {nil, []string{"qemu-max"}},
			{engine, "TestFastPathMatchesGoPath/lfence+rdtsc"}: {[]string{"llvm-xray-19", "go1.27.3", "qemu64", "qemu-max"}, nil},
		}, []string{"TestRDPIDIsCPU", "TestRDTSCPAuxIsCPU", "TestTSCReadsAgree", "TestCPUMigrationWithAffinity/rdtscp"}},
		{"advertised", CPU{"rdtscp": true, "rdpid": true, "invariant-tsc": true}, map[Key][2][]string{
			realmod:                                                     {nil, nat},
			{asm, "TestRDTSCPAuxIsCPU"}:                                 {cpuNat, others},
			{asm, "TestRDPIDIsCPU"}:                                     {cpuNat, others},
			{asm, "TestTSCReadsAgree"}:                                  {cpuNat, others},
			{engine, "TestCPUMigrationWithAffinity"}:                    {append(slices.Clone(cpuNat), "qemu-max"), []string{"purego", "arm64", "qemu64"}},
			{engine, "TestCPUMigrationWithAffinity/rdtscp"}:             {cpuNat, []string{"qemu-max"}},
			{engine, "TestCPUMigrationWithAffinity/rdpid+rdtsc"}:        {cpuNat, nil},
			{engine, "TestCPUMigrationWithAffinity/lfence+rdtsc+rdpid"}: {cpuNat, nil},
			{engine, "TestFastPathMatchesGoPath/rdpid+rdtsc"}:           {[]string{"llvm-xray-19", "go1.27.3"}, nil},
		}, nil},
	} {
		r := Check(outcomes(m.tests), l, m.cpu)
		if len(r.Unlisted) != 0 || len(r.Ran) != 0 {
			t.Errorf("%s CPU: unlisted %v, notes %v", m.name, r.Unlisted, r.Ran)
		}
		for _, k := range r.Absent {
			if len(l.Needs[k]) > 0 {
				t.Errorf("%s CPU: entry %s absent", m.name, k)
			}
		}
		if got := keys(r.ByCPU); !slices.Equal(got, m.byCPU) {
			t.Errorf("%s CPU: by the CPU %v, want %v", m.name, got, m.byCPU)
		}
	}
}
