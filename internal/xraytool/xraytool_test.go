package xraytool

import (
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

func TestParseYAML(t *testing.T) {
	in := `---
header:
  version:         5
  type:            1
  constant-tsc:    true
  nonstop-tsc:     false
  cycle-frequency: 1000000000
records:
  - { type: 0, func-id: 2, function: '2', args: [ 99, 77 ], cpu: 1, thread: 7, process: 42, kind: function-enter-arg, tsc: 1020, data: '' }
  - { type: 0, func-id: 2, function: '2', cpu: 1, thread: -7, process: 42, kind: custom-event, tsc: 1025, data: "hi\n'x, \x01" }
  - { type: 3, func-id: 2, function: '2', cpu: 1, thread: 7, process: 42, kind: typed-event, tsc: 1030, data: 'it''s' }
...
`
	tr, err := ParseYAML(in)
	if err != nil {
		t.Fatal(err)
	}
	want := &Trace{Version: 5, Type: 1, ConstantTSC: true, Frequency: 1e9, Records: []Record{
		{Kind: "function-enter-arg", FuncID: 2, Args: []uint64{99, 77}, CPU: 1, Thread: 7, Process: 42, TSC: 1020},
		{Kind: "custom-event", FuncID: 2, CPU: 1, Thread: -7, Process: 42, TSC: 1025, Data: "hi\n'x, \x01"},
		{Kind: "typed-event", FuncID: 2, CPU: 1, Thread: 7, Process: 42, TSC: 1030, Data: "it's"},
	}}
	if !reflect.DeepEqual(tr, want) {
		t.Errorf("got  %+v\nwant %+v", tr, want)
	}
}

// TestNeedExec: a missing tool skips the test naming the install command,
// unless GOXRAY_REQUIRE_TOOLS=1, which makes it fail. Run in a child test
// binary so that the outcome can be observed.
func TestNeedExec(t *testing.T) {
	if os.Getenv("XRAYTOOL_CHILD") == "1" {
		NeedExec(t, "goxray-no-such-tool", "apt-get install -y no-such-package")
		t.Log("reached after NeedExec")
		return
	}
	if p := NeedExec(t, "go", "install Go"); p == "" {
		t.Fatal("NeedExec(go) returned no path")
	}
	for _, c := range []struct {
		require  string
		fail     bool
		contains string
	}{
		{"", false, "--- SKIP: TestNeedExec"},
		{"0", false, "--- SKIP: TestNeedExec"},
		{"1", true, "--- FAIL: TestNeedExec"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNeedExec$", "-test.v")
		cmd.Env = append(os.Environ(), "XRAYTOOL_CHILD=1", RequireToolsVar+"="+c.require)
		out, err := cmd.CombinedOutput()
		if (err != nil) != c.fail || !strings.Contains(string(out), c.contains) ||
			!strings.Contains(string(out), "apt-get install -y no-such-package") || strings.Contains(string(out), "reached after") {
			t.Errorf("%s=%q: err %v, output:\n%s", RequireToolsVar, c.require, err, out)
		}
	}
}
