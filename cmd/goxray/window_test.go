package main

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/goxray/xray"
	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/xraytool"
	"github.com/goxray/xray/xrayauto"
)

// A server in miniature: an accept loop that waits for the whole window,
// and a read loop that handles messages (handle > parse > decode >
// poolGet), decode being automatically instrumented (it has a gate) and
// hot enough for the overhead governor to shed.
var (
	winIDs                                       struct{ accept, read, handle, parse, pool xray.ID }
	decodeIDs                                    [1]xrayauto.ID
	decodeGates                                  [1]xrayauto.Gate
	winMessages, winAccept, winAcceptDone, winRD chan struct{}
)

func winAcceptLoop() {
	xray.Enter(winIDs.accept)
	defer xray.Exit(winIDs.accept)
	close(winAccept)
	<-winAcceptDone
}

func winReadLoop() {
	xray.Enter(winIDs.read)
	defer xray.Exit(winIDs.read)
	for range winMessages {
		winHandle()
		winRD <- struct{}{}
	}
}

func winHandle() {
	xray.Enter(winIDs.handle)
	defer xray.Exit(winIDs.handle)
	winParse()
}

func winParse() {
	xray.Enter(winIDs.parse)
	defer xray.Exit(winIDs.parse)
	for range 20 {
		winDecode()
	}
}

func winDecode() {
	if decodeGates[0].On() {
		xray.Enter(decodeIDs[0])
		defer xray.Exit(decodeIDs[0])
	}
	winPoolGet()
}

func winPoolGet() {
	xray.Enter(winIDs.pool)
	xray.Exit(winIDs.pool)
}

func funcName(f any) string {
	return goruntime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
}

// TestWindowGapsInEveryView: a flight-recorder window of a server whose
// read and accept loops began long before it, after the governor shed
// decode. The file must carry both facts, llvm-xray 14 and 19 must load
// it, and every view must show the loops (entered before the window,
// open at its end) and mark parse > poolGet as a path that may skip the
// shed decode, naming it.
func TestWindowGapsInEveryView(t *testing.T) {
	winIDs.accept = xray.FuncOf(winAcceptLoop)
	winIDs.read = xray.FuncOf(winReadLoop)
	winIDs.handle = xray.FuncOf(winHandle)
	winIDs.parse = xray.FuncOf(winParse)
	winIDs.pool = xray.FuncOf(winPoolGet)
	xrayauto.RegisterTable(decodeIDs[:], decodeGates[:], "window_test.go", funcName(winDecode)+"\t60\n")
	winMessages, winAccept, winAcceptDone, winRD = make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})

	dir := t.TempDir()
	if err := xray.Start(xray.Options{Dir: dir, BufferSize: 4096, BufferCount: 16, OverheadBudget: 1e-6}); err != nil {
		t.Fatal(err)
	}
	defer xray.Stop()
	go winAcceptLoop()
	<-winAccept
	go winReadLoop()
	send := func() { winMessages <- struct{}{}; <-winRD }
	// Until the governor sheds decode (it looks every 100 ms, or when a
	// buffer fills fast), bounded by work done, not time.
	for i := 0; decodeGates[0].On(); i++ {
		if i == 2_000_000 {
			t.Fatal("decode was not shed")
		}
		send()
	}
	// Enough messages after the shed to recycle every buffer that held
	// the loops' Entries and the governor's own shed event: 16 buffers
	// of 4 KiB hold about 8,000 records, a message writes about 86.
	for range 2000 {
		send()
	}
	path, err := xray.Flush()
	if err != nil {
		t.Fatal(err)
	}
	close(winAcceptDone)
	close(winMessages)
	if st := xray.Stats(); st.BuffersRecycled == 0 {
		t.Fatalf("no buffer recycled: %+v", st)
	}

	// The file: the shed set at its start, the loops' Entries named by
	// open-calls events, and no trace of the governor's own event.
	data := readFile(t, path)
	f, err := fdr.ParseStrict(data)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := f.Events()
	if err != nil {
		t.Fatal(err)
	}
	var shedSet, governorEvent bool
	opened := map[uint32]bool{}
	for _, e := range evs {
		if e.Type != fdr.EventCustom {
			continue
		}
		if sh, ok := fdr.ParseShed(e.Data); ok && sh.FuncID == uint32(decodeIDs[0]) {
			if sh.At == 0 {
				governorEvent = true
			} else {
				shedSet = true
				if !reflect.DeepEqual(sh.Callers, []uint32{uint32(winIDs.parse)}) || !reflect.DeepEqual(sh.Callees, []uint32{uint32(winIDs.pool)}) {
					t.Errorf("shed set: %+v, want caller %d and callee %d", sh, winIDs.parse, winIDs.pool)
				}
			}
		}
		if ids, ok := fdr.ParseOpen(e.Data); ok {
			for _, id := range ids {
				opened[id] = true
			}
		}
	}
	if !shedSet || governorEvent {
		t.Errorf("shed set in the file: %v; governor's event still in the window: %v (the test wants it recycled)", shedSet, governorEvent)
	}
	if !opened[uint32(winIDs.read)] || !opened[uint32(winIDs.accept)] {
		t.Errorf("open-calls events name %v, want the read loop %d and the accept loop %d", opened, winIDs.read, winIDs.accept)
	}
	for _, name := range []string{"llvm-xray", "llvm-xray-19"} {
		bin := xraytool.NeedExec(t, name, "apt-get install -y llvm llvm-19")
		xraytool.Check(t, bin, path)
		if _, err := xraytool.Run(bin, "graph", path); err != nil {
			t.Errorf("%s graph: %v", name, err)
		}
	}

	// Every view.
	read, accept, parse, decode, pool := funcName(winReadLoop), funcName(winAcceptLoop), funcName(winParse), funcName(winDecode), funcName(winPoolGet)
	out := func(name string) string { return filepath.Join(dir, name) }
	view := func(args ...string) string {
		t.Helper()
		o := out(strings.Join(args, "_"))
		runCommand(t, append(append(args, path), "-o", o)...)
		return string(readFile(t, o))
	}
	has := func(what, s string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(s, w) && !strings.HasPrefix(w, "re:") || strings.HasPrefix(w, "re:") && !regexp.MustCompile(w[3:]).MatchString(s) {
				t.Errorf("%s lacks %q:\n%s", what, w, s[:min(len(s), 6000)])
			}
		}
	}
	// A mark among others: the window may also cut a call of poolGet or
	// parse ("1 entered before window").
	marked := func(name, mark string) string {
		return "re:" + regexp.QuoteMeta(name) + ` \[([^]]*, )?` + regexp.QuoteMeta(mark) + `(, [^]]*)?\]`
	}
	loop := read + " [1 entered before window, 1 open at end]"
	edge := marked(pool, "may skip shed calls")
	self := marked(parse, "self may include shed calls")
	has("top", view("top", "-n", "0", "-shed"), "Shed by the overhead governor", decode, "called by: "+parse+"; calls: "+pool,
		loop, accept+" [1 entered before window, 1 open at end]", edge, self, "calls were open when the window began")
	has("top -lineage", view("top", "-lineage", "-n", "0"), loop, edge)
	has("stack -marks", view("stack", "-marks"), loop+";"+funcName(winHandle), edge, accept+" [1 entered before window, 1 open at end] ")
	// Plain frames; the marks on standard error, with their functions.
	var plain string
	stderr := captureStderr(t, func() { plain = view("stack") })
	has("stack", plain, read+";"+funcName(winHandle)+" ", accept+" ")
	if strings.Contains(plain, "[") {
		t.Errorf("stack's frames carry marks:\n%s", plain)
	}
	has("stack's standard error", stderr, decode, read+": 1 entered before window, 1 open at end", accept+": 1 entered before window, 1 open at end",
		pool+": ", "may skip shed calls", parse+": ", "self may include shed calls")
	has("account", view("account"), "Shed by the overhead governor", decode+" [shed: later calls not traced]",
		loop, "calls were open when the window began")
	has("flame", view("flame"), "shed by the overhead governor", "may skip shed calls", winShort(read))
	has("perfetto", view("perfetto"), "goxray: what this window lacks", "entered before window", "may skip shed calls", "open at end")
	has("why", view("why", "-shed"), "Shed by the overhead governor", decode, "called by: "+parse+"; calls: "+pool, "their time is in their callers' split")
	view("pprof")
	pf, err := os.Open(out("pprof"))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	prof, err := profile.Parse(pf)
	if err != nil {
		t.Fatal(err)
	}
	has("pprof comments", strings.Join(prof.Comments, "\n"), "Shed by the overhead governor", decode)
	var labels []string
	for _, s := range prof.Sample {
		labels = append(labels, s.Label["window"]...)
	}
	has("pprof labels", strings.Join(labels, "\n"), "1 entered before window", "may skip shed calls")
}

// winShort is how the flame graph may abbreviate a long name: its last
// path element.
func winShort(name string) string { return name[strings.LastIndex(name, "/")+1:] }

// deepWait blocks n frames below deepRoot until done closes.
func deepRoot(n int, ready chan<- struct{}, done <-chan struct{}) {
	xray.Enter(openIDs.root)
	defer xray.Exit(openIDs.root)
	deepWait(n, ready, done)
}

//go:noinline
func deepWait(n int, ready chan<- struct{}, done <-chan struct{}) {
	if n == 0 {
		ready <- struct{}{}
		<-done
		return
	}
	deepWait(n-1, ready, done)
}

var openIDs struct{ root, work xray.ID }

// TestOpenMissingInEveryView: a goroutine 200 frames deep, too deep for
// the runtime to read its root, holds a call open across the window: the
// file says that a goroutine may lack such calls, and every view says it,
// flame and why included.
func TestOpenMissingInEveryView(t *testing.T) {
	openIDs.root = xray.FuncOf(deepRoot)
	openIDs.work = xray.Register("window_test.work")
	dir := t.TempDir()
	if err := xray.Start(xray.Options{Dir: dir, BufferSize: 4096, BufferCount: 16}); err != nil {
		t.Fatal(err)
	}
	defer xray.Stop()
	ready, done := make(chan struct{}), make(chan struct{})
	defer close(done)
	go deepRoot(200, ready, done)
	<-ready
	// Enough records to recycle the buffer that held the root's Entry.
	for range 20000 {
		xray.Enter(openIDs.work)
		xray.Exit(openIDs.work)
	}
	path, err := xray.Flush()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readFile(t, path)), "goxray.open unknown goroutines=") {
		t.Fatal("the file does not say that a goroutine may lack calls open across the window")
	}
	const note = "Calls open across the whole window may be missing on"
	out := func(name string) string { return filepath.Join(dir, name) }
	for _, v := range [][]string{{"top"}, {"account"}, {"why"}, {"perfetto"}} {
		o := out(v[0])
		runCommand(t, append(append(v, path), "-o", o)...)
		if s := string(readFile(t, o)); !strings.Contains(s, note) {
			t.Errorf("%s does not say it: %s", v[0], s[:min(len(s), 2000)])
		}
	}
	// Folded stacks stay plain: the note goes to standard error.
	if code, stderr := runStderr(t, "stack", path, "-o", out("stack")); code != 0 || !strings.Contains(stderr, note) {
		t.Errorf("stack: exit %d, standard error does not say it: %s", code, stderr)
	}
	runCommand(t, "flame", path, "-o", out("flame"))
	// At least the deep goroutine; a flush during which another
	// goroutine dropped records counts that one's too.
	if s := string(readFile(t, out("flame"))); !strings.Contains(s, "calls open across the whole window may be missing on ") {
		t.Errorf("flame does not say it: %s", s[:min(len(s), 2000)])
	}
	runCommand(t, "pprof", path, "-o", out("pprof"))
	pf, err := os.Open(out("pprof"))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	prof, err := profile.Parse(pf)
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(prof.Comments, "\n"); !strings.Contains(s, note) {
		t.Errorf("pprof comments do not say it: %s", s)
	}
}
