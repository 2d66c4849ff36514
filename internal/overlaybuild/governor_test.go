package overlaybuild

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goxray/xray/internal/modfixture"
)

// serverRuns is how many times TestGovernorKeepsTheHandler runs the
// server: the governor must keep its handler in every one.
const serverRuns = 10

// serverPerRequest is how many calls of each traced function of
// testdata/server a request makes at the arguments the test gives it
// (10 fields of 4 numbers), and which of them last: readRequest waits
// for the client and handle for the log's fsync, so their calls outlast
// the goroutine's turn on its P; the others' are short.
var serverPerRequest = map[string]int{
	"main.parseNumber": 40, "main.parseField": 10,
	"main.decode": 1, "main.validate": 1, "main.authorize": 1, "main.(*store).quota": 1, "main.(*store).route": 1,
	"main.shard": 1, "main.(*store).observe": 1, "main.(*accessLog).add": 1, "main.answer": 1, "main.encodeEntry": 1,
	"main.readRequest": 1, "main.(*store).handle": 1,
}

// serverLasting are the request path's functions whose calls last.
var serverLasting = []string{"main.readRequest", "main.(*store).handle"}

// shedLine picks the functions out of the governor's log line.
var shedLine = regexp.MustCompile(`([^\s,]+) \(\d+% of records`)

// TestGovernorKeepsTheHandler: testdata/server, a key-value server built
// by goxray build at the default settings, serves 32 connections with a
// goroutine each, whose requests go through a hot parser (50 calls a
// request) and a request path of a dozen functions (one call each, the
// handler waiting for the write-ahead log's fsync), at a few thousand
// requests a second. Run ten times at a budget of 2 %, the governor
// sheds the parser first, then, only if the budget asks for more, the
// request path's short calls: the handler and the read of each request,
// whose calls last, stay in every run, and the trace has the handler's
// calls. A governor that acted on each look's estimate shed, one swing
// of the estimate after another, the request path's functions in turn,
// its read of requests among them.
func TestGovernorKeepsTheHandler(t *testing.T) {
	tool, dir := testdataModule(t, "server")
	bin := filepath.Join(t.TempDir(), "server")
	_, e, code := modfixture.Run(t, dir, nil, tool, "build", "-xray.v", "-o", bin, ".")
	if code != 0 {
		t.Fatalf("goxray build: exit %d\n%s", code, e)
	}
	for name := range serverPerRequest {
		if !tracedLine(e, name) {
			t.Fatalf("goxray build does not trace %s:\n%s", name, e)
		}
	}
	for run := range serverRuns {
		traces := t.TempDir()
		env := append(modfixture.XrayEnv(traces), "XRAY_FDR_OPTIONS=overhead_budget=2")
		out, e, code := modfixture.Run(t, dir, env, bin, "-wal", filepath.Join(t.TempDir(), "wal"), "-requests", "600", "-fields", "10")
		if code != 0 || !strings.HasPrefix(out, "served ") {
			t.Fatalf("run %d: exit %d\n%s%s", run, code, out, e)
		}
		var shed []string
		for _, l := range strings.Split(e, "\n") {
			if !strings.Contains(l, "overhead budget 2%") || !strings.Contains(l, "shed until the session ends") {
				continue
			}
			for _, m := range shedLine.FindAllStringSubmatch(l, -1) {
				shed = append(shed, m[1])
			}
		}
		// The parser costs many times the budget: it goes.
		if !slices.Contains(shed, "main.parseNumber") {
			t.Errorf("run %d: the parser's hottest function was not shed; shed %v\n%s", run, shed, e)
		}
		// Costliest first: nothing is shed while a function that costs
		// more than about as much stays.
		for _, s := range shed {
			for name, n := range serverPerRequest {
				if n*3 > serverPerRequest[s]*4 && !slices.Contains(shed, name) {
					t.Errorf("run %d: %s (%d calls a request) shed while %s (%d) stays", run, s, serverPerRequest[s], name, n)
				}
			}
		}
		// The calls that last stay: the short ones cost the rest.
		for _, name := range serverLasting {
			if slices.Contains(shed, name) {
				t.Errorf("run %d: %s was shed (shed %v)\n%s", run, name, shed, e)
			}
		}
		for tool, rows := range modfixture.Account(t, modfixture.OnlyTrace(t, traces)) {
			if rows["main.(*store).handle"].Count == 0 {
				t.Errorf("run %d: %s account: no call of the handler in the trace", run, tool)
			}
		}
		t.Logf("run %d: shed %v", run, shed)
	}
}

// tracedLine reports whether -xray.v's output says name is instrumented.
func tracedLine(v, name string) bool {
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(l, " "+name+" (size ") && !strings.Contains(l, "not traced") {
			return true
		}
	}
	return false
}
