package testledger

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const mod = "github.com/goxray/xray"

// stream is a go test -json stream of one package's run.
func stream(lines ...string) string {
	return strings.Join(lines, "\n") + "\n"
}

func record(t *testing.T, dir, config, in string) (failed bool, printed string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, config+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	failed, err = Record(config, strings.NewReader(in), f, &out)
	if err != nil {
		t.Fatal(err)
	}
	return failed, out.String()
}

func ledger(t *testing.T, text string) *Ledger {
	t.Helper()
	l, err := ParseLedger("ledger.txt", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestSkippedEverywhereFailsUnlessListed(t *testing.T) {
	dir := t.TempDir()
	native := stream(
		`{"Action":"run","Package":"`+mod+`/runtime","Test":"TestCPU"}`,
		`{"Action":"output","Package":"`+mod+`/runtime","Test":"TestCPU","Output":"=== RUN   TestCPU\n"}`,
		`{"Action":"output","Package":"`+mod+`/runtime","Test":"TestCPU","Output":"    runtime_test.go:174: the nanotime clock does not tell the CPU\n"}`,
		`{"Action":"output","Package":"`+mod+`/runtime","Test":"TestCPU","Output":"--- SKIP: TestCPU (0.00s)\n"}`,
		`{"Action":"skip","Package":"`+mod+`/runtime","Test":"TestCPU"}`,
		`{"Action":"run","Package":"`+mod+`/runtime","Test":"TestOnlyHere"}`,
		`{"Action":"output","Package":"`+mod+`/runtime","Test":"TestOnlyHere","Output":"    x_test.go:9: needs arm64\n"}`,
		`{"Action":"skip","Package":"`+mod+`/runtime","Test":"TestOnlyHere"}`,
		`{"Action":"pass","Package":"`+mod+`/runtime","Test":"TestRuns"}`,
		`{"Action":"output","Package":"`+mod+`/runtime","Output":"ok  \t`+mod+`/runtime\t0.1s\n"}`,
		`{"Action":"pass","Package":"`+mod+`/runtime"}`,
	)
	arm := stream(
		`{"Action":"skip","Package":"`+mod+`/runtime","Test":"TestCPU"}`,
		`{"Action":"pass","Package":"`+mod+`/runtime","Test":"TestOnlyHere"}`,
		`{"Action":"pass","Package":"`+mod+`/runtime"}`,
	)
	failed, printed := record(t, dir, "native", native)
	if failed {
		t.Error("a run with skips and passes reported a failure")
	}
	if !strings.Contains(printed, "--- SKIP: ./runtime TestCPU: the nanotime clock does not tell the CPU") {
		t.Errorf("skip line with its reason missing from:\n%s", printed)
	}
	if !strings.Contains(printed, "ok  \t"+mod+"/runtime") {
		t.Errorf("package line missing from:\n%s", printed)
	}
	record(t, dir, "arm64", arm)
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	all, err := Load(files...)
	if err != nil {
		t.Fatal(err)
	}

	r := Check(all, ledger(t, ""), CPU{})
	if r.OK() || len(r.Unlisted) != 1 {
		t.Fatalf("unlisted = %v, want only TestCPU", r.Unlisted)
	}
	os := r.Unlisted[Key{mod + "/runtime", "TestCPU"}]
	if len(os) != 2 || os[0].Reason == os[1].Reason && os[0].Config == os[1].Config {
		t.Errorf("TestCPU outcomes %+v, want one per configuration", os)
	}
	var w bytes.Buffer
	r.Write(&w, "ledger.txt")
	if !strings.Contains(w.String(), "FAIL: ./runtime TestCPU was skipped in every configuration") ||
		!strings.Contains(w.String(), "native: the nanotime clock does not tell the CPU") {
		t.Errorf("report does not name the test and its reasons:\n%s", w.String())
	}

	r = Check(all, ledger(t, "# comment\n./runtime TestCPU: needs the CPU id\n"), CPU{})
	if !r.OK() {
		t.Errorf("a listed test failed the check: %+v", r)
	}
	r = Check(all, ledger(t, "./runtime TestCPU: needs the CPU id\n./runtime TestOnlyHere: arm64 only\n"), CPU{})
	if !r.OK() || len(r.Ran) != 1 {
		t.Errorf("a listed test that ran somewhere: OK %v, ran %v; want a note, not a failure", r.OK(), r.Ran)
	}
	r = Check(all, ledger(t, "./runtime TestCPU: needs the CPU id\n./runtime TestGone: renamed\n"), CPU{})
	if r.OK() || len(r.Absent) != 1 {
		t.Errorf("an entry naming no test: OK %v, absent %v; want a failure", r.OK(), r.Absent)
	}
}

func TestSubtestWildcard(t *testing.T) {
	all := map[Key][]Outcome{
		{mod, "TestA"}:       {{Config: "native", Action: "pass"}},
		{mod, "TestA/one"}:   {{Config: "native", Action: "skip", Reason: "x"}},
		{mod, "TestA/two/x"}: {{Config: "native", Action: "skip", Reason: "y"}},
		{mod, "TestB/one"}:   {{Config: "native", Action: "skip", Reason: "z"}},
	}
	r := Check(all, ledger(t, ". TestA/*: the fixtures need a network\n"), CPU{})
	if len(r.Unlisted) != 1 || r.Unlisted[Key{mod, "TestB/one"}] == nil {
		t.Errorf("unlisted %v, want only TestB/one", r.Unlisted)
	}
}

func TestFailuresAreReportedWithTheirOutput(t *testing.T) {
	dir := t.TempDir()
	failed, printed := record(t, dir, "native", stream(
		`{"Action":"output","Package":"`+mod+`/fdr","Test":"TestX","Output":"    x_test.go:3: boom\n"}`,
		`{"Action":"fail","Package":"`+mod+`/fdr","Test":"TestX"}`,
		`{"Action":"output","Package":"`+mod+`/fdr","Test":"TestY","Output":"panic: crash\n"}`,
		`{"Action":"output","Package":"`+mod+`/fdr","Output":"FAIL\t`+mod+`/fdr\t0.1s\n"}`,
		`{"Action":"fail","Package":"`+mod+`/fdr"}`,
		`not json: go: unknown flag`,
	))
	if !failed {
		t.Error("a failed test did not report a failure")
	}
	for _, want := range []string{"boom", "panic: crash", "FAIL\t" + mod + "/fdr", "go: unknown flag"} {
		if !strings.Contains(printed, want) {
			t.Errorf("%q missing from:\n%s", want, printed)
		}
	}
}

func TestLedgerSyntax(t *testing.T) {
	for _, bad := range []string{
		"./runtime TestX\n",                        // no reason
		"runtime TestX: reason\n",                  // not ./
		"./runtime TestX: a\n./runtime TestX: b\n", // twice
		"./runtime Benchmark: reason\n",            // not a test
	} {
		if _, err := ParseLedger("l", strings.NewReader(bad)); err == nil {
			t.Errorf("ledger %q accepted", bad)
		}
	}
}

// TestRepositoryLedgerParses keeps the repository's own ledger readable.
func TestRepositoryLedgerParses(t *testing.T) {
	f, err := os.Open("../../.ci/skip-ledger.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := ParseLedger(f.Name(), f)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Reasons) == 0 {
		t.Error("the ledger lists nothing")
	}
}
