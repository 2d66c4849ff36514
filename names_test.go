package xray

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/goxray/xray/internal/xraytool"
)

type namedServer struct{}

func (*namedServer) Handle() {
	Enter(idNamedHandle)
	defer Exit(idNamedHandle)
	namedQuery()
}

func namedQuery() {
	Enter(idNamedQuery)
	defer Exit(idNamedQuery)
}

var idNamedHandle, idNamedQuery, idNamedByString ID

func init() {
	idNamedHandle = FuncOf((*namedServer).Handle)
	idNamedQuery = FuncOf(namedQuery)
	idNamedByString = Register("custom/pkg.Thing.do")
}

// TestInteropNamesFromTheMap: every flush writes <trace>.map, and with it
// llvm-xray's account, stack, graph and convert -symbolize print Go names
// and file:line; an id nobody registered still shows as its number.
func TestInteropNamesFromTheMap(t *testing.T) {
	bin := xraytool.Bin(t)
	dir := t.TempDir()
	start(t, Options{Dir: dir})
	for i := 0; i < 3; i++ {
		(&namedServer{}).Handle()
	}
	Enter(idNamedByString)
	Exit(idNamedByString)
	unregistered := MaxID - 5
	Enter(unregistered)
	Exit(unregistered)
	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	m := path + ".map"
	acc, err := xraytool.Run(bin, "account", "-instr_map="+m, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`names_test\.go:17:0: github\.com/goxray/xray\.\(\*namedServer\)\.Handle`),
		regexp.MustCompile(`names_test\.go:23:0: github\.com/goxray/xray\.namedQuery`),
		// A registered name reads cleanly: the position of its Register call.
		regexp.MustCompile(`names_test\.go:33:0: custom/pkg\.Thing\.do`),
		regexp.MustCompile(`#268435450`),
	} {
		if !want.MatchString(acc) {
			t.Errorf("account output lacks %v:\n%s", want, acc)
		}
	}
	stack, err := xraytool.Run(bin, "stack", "-instr_map="+m, path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stack, "github.com/goxray/xray.(*namedServer).Handle") || !strings.Contains(stack, "github.com/goxray/xray.namedQuery") {
		t.Errorf("stack output lacks names:\n%s", stack)
	}
	graph, err := xraytool.Run(bin, "graph", "-instr_map="+m, path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(graph, "namedQuery") {
		t.Errorf("graph output lacks names:\n%s", graph)
	}
	conv, err := xraytool.Run(bin, "convert", "-symbolize", "-instr_map="+m, "-output-format=yaml", path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(conv, "function:        'github.com/goxray/xray.namedQuery'") && !strings.Contains(conv, "function: 'github.com/goxray/xray.namedQuery'") {
		t.Errorf("convert -symbolize lacks names:\n%s", conv[:min(len(conv), 2000)])
	}

	// WriteMapTo gives the same map for WriteTo's bytes.
	var tr, mp bytes.Buffer
	if _, err := WriteTo(&tr); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteMapTo(&mp); err != nil {
		t.Fatal(err)
	}
	p2, m2 := filepath.Join(dir, "w.xray"), filepath.Join(dir, "w.map")
	os.WriteFile(p2, tr.Bytes(), 0o600)
	os.WriteFile(m2, mp.Bytes(), 0o600)
	acc2, err := xraytool.Run(bin, "account", "-instr_map="+m2, p2)
	if err != nil || !strings.Contains(acc2, "(*namedServer).Handle") {
		t.Errorf("WriteTo + WriteMapTo: %v\n%s", err, acc2)
	}
}

// TestHandPickedAndRegisteredIDsStayApart: a hand-picked 1 and Register's
// first id give llvm-xray account two functions with their own names and
// counts, not one function under one name.
func TestHandPickedAndRegisteredIDsStayApart(t *testing.T) {
	bin := xraytool.Bin(t)
	const idHandPicked ID = 1
	Name(idHandPicked, "handpicked.handle")
	idOther := Register("handpicked.other")
	if idOther <= MaxManualID {
		t.Fatalf("Register gave %d, a hand-picked id", idOther)
	}
	dir := t.TempDir()
	start(t, Options{Dir: dir})
	for i := 0; i < 100; i++ {
		Enter(idHandPicked)
		Exit(idHandPicked)
	}
	for i := 0; i < 200; i++ {
		Enter(idOther)
		Exit(idOther)
	}
	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	acc, err := xraytool.Run(bin, "account", "-instr_map="+path+".map", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\s+1\s+100 .* names_test\.go:\d+:0: handpicked\.handle$`),
		regexp.MustCompile(`(?m)^\s+` + strconv.Itoa(int(idOther)) + `\s+200 .*handpicked\.other$`),
	} {
		if !want.MatchString(acc) {
			t.Errorf("account output lacks %v:\n%s", want, acc)
		}
	}
}
