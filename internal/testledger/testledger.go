// Package testledger keeps skipped tests from rotting.
//
// `make test` runs the suite in several configurations (native under the
// race detector, purego, against llvm-xray-19, Go 1.27, arm64 and two x86
// CPU models under qemu-user). A test that skips in one of them is fine: it
// needs something that configuration lacks. A test that skips in every
// configuration is a test nobody has, whatever the reason, so the check
// fails on it unless the ledger (one file in the repository) lists it with
// its reason.
//
// Each configuration's `go test -json` stream goes through Record, which
// prints what a plain `go test` would (failures with their output, skips
// with their reason, the package lines) and keeps the events in a file.
// Check reads those files and the ledger. The unit is a test or subtest by
// its full name in its package; a test that never appeared is not judged.
//
// Some tests can run only on a CPU that has a feature natively (RDTSCP,
// RDPID, an invariant TSC): the emulators that give the other
// configurations other CPUs do not keep what they test. On a machine
// whose CPU hides the feature, such a test skips everywhere, or does not
// appear at all (a subtest per clock the CPU has). Its ledger entry says
// what it needs ("[needs rdtscp]"), and Check is given the machine's CPU
// (CPUID, which the testledger command reads): the entry excuses the test
// only where the CPU lacks a feature it needs, and the report says once
// what this CPU lacks and which tests that kept from running. On a CPU
// with every feature the entry needs, the test must run like any other.
package testledger

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Event is the part of a `go test -json` event (cmd/test2json) used here.
type Event struct {
	Action  string
	Package string `json:",omitempty"`
	Test    string `json:",omitempty"`
	Output  string `json:",omitempty"`
	// ImportPath carries build output (Action "build-output", "build-fail").
	ImportPath string `json:",omitempty"`
}

// Outcome is what one configuration did with one test.
type Outcome struct {
	Config string
	Action string // "pass", "fail" or "skip"
	Reason string // for a skip, the last line the test logged
}

// Key names a test: its package and its full name ("TestA/sub").
type Key struct{ Package, Test string }

func (k Key) String() string { return k.Package + " " + k.Test }

// Record copies the -json stream in to events (one JSON object a line, with
// the configuration's name) and prints a plain-go-test view of it to out:
// the output of failed tests, one line per skip with its reason, and
// package-level lines (ok, FAIL, build errors, panics). It returns whether
// any test or package failed, so a caller whose pipeline lost the exit
// status still sees a failure.
func Record(config string, in io.Reader, events, out io.Writer) (failed bool, err error) {
	type key struct{ pkg, test string }
	pending := map[key][]string{} // output of tests still running
	enc := json.NewEncoder(events)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e Event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			// go test prints some errors (a bad flag, a missing package)
			// outside the JSON stream.
			fmt.Fprintf(out, "%s\n", line)
			continue
		}
		k := key{e.Package, e.Test}
		if e.Test != "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip") {
			o := Outcome{Config: config, Action: e.Action}
			if e.Action == "skip" {
				o.Reason = skipReason(pending[k])
			}
			if err := enc.Encode(struct {
				Key
				Outcome
			}{Key{e.Package, e.Test}, o}); err != nil {
				return failed, err
			}
		}
		switch {
		case e.Action == "build-output":
			io.WriteString(out, e.Output)
		case e.Action == "build-fail":
			failed = true
		case e.Test == "" && e.Action == "output":
			if !strings.HasPrefix(e.Output, "PASS") && !strings.HasPrefix(e.Output, "=== ") {
				io.WriteString(out, e.Output)
			}
		case e.Test == "" && e.Action == "fail":
			failed = true
			// A crash ends the binary with tests still running: their
			// output is the evidence.
			for pk, lines := range pending {
				if pk.pkg == e.Package {
					io.WriteString(out, strings.Join(lines, ""))
					delete(pending, pk)
				}
			}
		case e.Test != "" && e.Action == "output":
			pending[k] = append(pending[k], e.Output)
		case e.Test != "" && e.Action == "fail":
			failed = true
			io.WriteString(out, strings.Join(pending[k], ""))
			delete(pending, k)
		case e.Test != "" && e.Action == "skip":
			fmt.Fprintf(out, "--- SKIP: %s %s: %s\n", shortPkg(e.Package), e.Test, skipReason(pending[k]))
			delete(pending, k)
		case e.Test != "" && e.Action == "pass":
			delete(pending, k)
		}
	}
	return failed, sc.Err()
}

// skipReason is the last line a test logged before its "--- SKIP" line,
// without go test's indentation and file:line prefix.
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "--- SKIP") || strings.HasPrefix(l, "=== ") {
			continue
		}
		if j := strings.Index(l, ".go:"); j > 0 && !strings.Contains(l[:j], " ") {
			if k := strings.Index(l[j:], ": "); k > 0 {
				l = l[j+k+2:]
			}
		}
		return l
	}
	return "(no reason given)"
}

func shortPkg(p string) string {
	const mod = "github.com/goxray/xray"
	if p == mod {
		return "."
	}
	if strings.HasPrefix(p, mod+"/") {
		return "./" + p[len(mod)+1:]
	}
	return p
}

// Load reads the files Record wrote.
func Load(paths ...string) (map[Key][]Outcome, error) {
	all := map[Key][]Outcome{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for n := 1; sc.Scan(); n++ {
			var r struct {
				Key
				Outcome
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s:%d: %v", p, n, err)
			}
			all[r.Key] = append(all[r.Key], r.Outcome)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %v", p, err)
		}
	}
	return all, nil
}

// Ledger is the list of tests allowed to skip everywhere, with reasons.
type Ledger struct {
	Reasons map[Key]string // Test may end in "/*": all its subtests
	// Needs are the CPU features an entry's test needs natively (see
	// CPU): the entry excuses it only on a CPU that lacks one of them.
	Needs map[Key][]string
	order []Key
}

// ParseLedger reads a ledger: one test a line, "PACKAGE TEST: reason" or
// "PACKAGE TEST [needs FEATURE,…]: reason", where PACKAGE is "./dir"
// relative to the module ("." for the root), TEST is a test's full name,
// or a test's name followed by "/*" for all of its subtests, and each
// FEATURE one of Features. Blank lines and lines starting with # are
// comments. A line without a reason is an error: the reason is the point.
func ParseLedger(name string, r io.Reader) (*Ledger, error) {
	l := &Ledger{Reasons: map[Key]string{}, Needs: map[Key][]string{}}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		pkg, rest, ok := strings.Cut(line, " ")
		test, reason, ok2 := strings.Cut(strings.TrimSpace(rest), ": ")
		test, cond, _ := strings.Cut(test, " ")
		needs, err := parseNeeds(cond)
		if !ok || !ok2 || err != nil || strings.TrimSpace(reason) == "" || !strings.HasPrefix(pkg, ".") || !strings.HasPrefix(test, "Test") {
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", name, n, err)
			}
			return nil, fmt.Errorf("%s:%d: want \"./package TestName: reason\" or \"./package TestName [needs feature,…]: reason\", got %q", name, n, line)
		}
		k := Key{longPkg(pkg), test}
		if _, dup := l.Reasons[k]; dup {
			return nil, fmt.Errorf("%s:%d: %s listed twice", name, n, k)
		}
		l.Reasons[k] = strings.TrimSpace(reason)
		if len(needs) > 0 {
			l.Needs[k] = needs
		}
		l.order = append(l.order, k)
	}
	return l, sc.Err()
}

func longPkg(p string) string {
	const mod = "github.com/goxray/xray"
	if p == "." {
		return mod
	}
	return mod + "/" + strings.TrimPrefix(p, "./")
}

// covers returns the ledger entry that lists k, if any.
func (l *Ledger) covers(k Key) (Key, bool) {
	if _, ok := l.Reasons[k]; ok {
		return k, true
	}
	for name := k.Test; ; {
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			return Key{}, false
		}
		name = name[:i]
		if e := (Key{k.Package, name + "/*"}); l.Reasons[e] != "" {
			return e, true
		}
	}
}

// Report is the verdict of Check.
type Report struct {
	// Unlisted are tests skipped in every configuration they appeared in
	// and not in the ledger: each fails the check.
	Unlisted map[Key][]Outcome
	// Ran are ledger entries that ran somewhere (passed or failed in some
	// configuration): the reason may be gone on this machine, or only on
	// this machine (a CPU feature), so they are reported, not failed.
	Ran map[Key][]Outcome
	// Absent are ledger entries that matched no test at all: a renamed or
	// deleted test, which fails the check so the ledger cannot rot. An
	// entry with needs is not absent while its top-level test appeared:
	// its subtest may exist only on a CPU with what it needs.
	Absent []Key
	// ByCPU are the tests skipped everywhere that entries with needs
	// excused, because this CPU lacks Lacks: the machine cannot run them.
	ByCPU []Key
	Lacks []string
	// Elsewhere are, among Unlisted, those an entry with needs would
	// excuse on a CPU without them: this one has them all, so the test
	// should have run here. Each maps to what its entry needs.
	Elsewhere map[Key][]string
	// Configs are the configurations seen.
	Configs []string
}

// OK reports whether the check passes.
func (r *Report) OK() bool { return len(r.Unlisted) == 0 && len(r.Absent) == 0 }

// Check judges outcomes against the ledger, on a machine whose CPU has
// cpu. A test whose parent is skipped never appears, so only tests that
// appeared are judged.
func Check(all map[Key][]Outcome, l *Ledger, cpu CPU) *Report {
	r := &Report{Unlisted: map[Key][]Outcome{}, Ran: map[Key][]Outcome{}, Elsewhere: map[Key][]string{}}
	used := map[Key]bool{}
	tops := map[Key]bool{} // the top-level tests that appeared
	configs := map[string]bool{}
	lacks := map[string]bool{}
	for k, os := range all {
		tops[top(k)] = true
		ran := false
		for _, o := range os {
			configs[o.Config] = true
			if o.Action != "skip" {
				ran = true
			}
		}
		e, listed := l.covers(k)
		if listed {
			used[e] = true
		}
		missing := cpu.missing(l.Needs[e])
		excused := listed && (len(l.Needs[e]) == 0 || len(missing) > 0)
		switch {
		case ran && excused && e == k:
			r.Ran[k] = os
		case !ran && !excused:
			r.Unlisted[k] = os
			if listed {
				r.Elsewhere[k] = l.Needs[e]
			}
		case !ran && len(missing) > 0:
			r.ByCPU = append(r.ByCPU, k)
			for _, f := range missing {
				lacks[f] = true
			}
		}
	}
	for _, k := range l.order {
		if !used[k] && (len(l.Needs[k]) == 0 || !tops[top(k)]) {
			r.Absent = append(r.Absent, k)
		}
	}
	for c := range configs {
		r.Configs = append(r.Configs, c)
	}
	sort.Strings(r.Configs)
	sort.Slice(r.ByCPU, func(i, j int) bool { return r.ByCPU[i].String() < r.ByCPU[j].String() })
	for _, f := range Features {
		if lacks[f] {
			r.Lacks = append(r.Lacks, f)
		}
	}
	return r
}

// top is the key of k's top-level test.
func top(k Key) Key {
	name, _, _ := strings.Cut(k.Test, "/")
	return Key{k.Package, name}
}

// Write prints the report for a person: what fails the check and why, and
// what to do about it.
func (r *Report) Write(w io.Writer, ledgerPath string) {
	keys := func(m map[Key][]Outcome) []Key {
		var ks []Key
		for k := range m {
			ks = append(ks, k)
		}
		sort.Slice(ks, func(i, j int) bool { return ks[i].String() < ks[j].String() })
		return ks
	}
	fmt.Fprintf(w, "skip ledger: %d configurations (%s)\n", len(r.Configs), strings.Join(r.Configs, ", "))
	if len(r.ByCPU) > 0 {
		var names []string
		for _, k := range r.ByCPU {
			names = append(names, shortPkg(k.Package)+" "+k.Test)
		}
		fmt.Fprintf(w, "skip ledger: this CPU lacks %s (CPUID), which these tests need natively, so no configuration here runs them: %s\n",
			strings.Join(r.Lacks, ", "), strings.Join(names, "; "))
	}
	for _, k := range keys(r.Ran) {
		var where []string
		for _, o := range r.Ran[k] {
			if o.Action != "skip" {
				where = append(where, o.Config)
			}
		}
		fmt.Fprintf(w, "note: %s %s is in %s but ran here (%s); drop it if it runs on every machine CI may have\n",
			shortPkg(k.Package), k.Test, filepath.Base(ledgerPath), strings.Join(where, ", "))
	}
	for _, k := range r.Absent {
		fmt.Fprintf(w, "FAIL: %s lists %s %s, which no configuration ran: remove or rename it\n", ledgerPath, shortPkg(k.Package), k.Test)
	}
	for _, k := range keys(r.Unlisted) {
		fmt.Fprintf(w, "FAIL: %s %s was skipped in every configuration:\n", shortPkg(k.Package), k.Test)
		for _, o := range r.Unlisted[k] {
			fmt.Fprintf(w, "        %s: %s\n", o.Config, o.Reason)
		}
		if needs, ok := r.Elsewhere[k]; ok {
			fmt.Fprintf(w, "        %s excuses it only on a CPU that lacks %s (CPUID); this one does not, so it should run natively\n",
				filepath.Base(ledgerPath), strings.Join(needs, " or "))
		}
	}
	if len(r.Unlisted) > 0 {
		fmt.Fprintf(w, "Give each a configuration that runs it, or list it in %s with its reason.\n", ledgerPath)
	}
}
