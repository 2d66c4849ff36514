package analysis

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/instrmap"
)

// A service's calls around a shed (ids): serve (1) handles requests
// through handle (2), which calls lookup (3, shed at 5000, its calls of
// check (4) in the window before that) and, directly, reply (5). Another
// goroutine's loop (6) calls log (7), which calls nothing shed.
const (
	smServe, smHandle, smLookup, smCheck, smReply, smLoop, smLog = 1, 2, 3, 4, 5, 6, 7
	smShedAt                                                     = 5000
)

// shedMarkEvents: two requests before the shed (handle > lookup > check,
// handle > reply), two after it (handle > check, whose lookup is no
// longer recorded, and handle > reply), and the other goroutine's calls
// throughout. The shed event names no caller or callee: as the runtime
// saw them, none ("none seen", nil).
func shedMarkEvents(set fdr.Shed) []Event {
	evs := []Event{{Type: fdr.EventCustom, TID: 9, TSC: 100, Data: fdr.AppendShedPayload(nil, set)}}
	add := func(tid int32, tsc uint64, typ fdr.EventType, fn uint32) {
		evs = append(evs, Event{Type: typ, TID: tid, TSC: tsc, FuncID: fn})
	}
	in, out := fdr.EventEnter, fdr.EventExit
	for _, t0 := range []uint64{1000, 3000} { // before the shed
		add(1, t0, in, smServe)
		add(1, t0+10, in, smHandle)
		add(1, t0+20, in, smLookup)
		add(1, t0+30, in, smCheck)
		add(1, t0+40, out, smCheck)
		add(1, t0+50, out, smLookup)
		add(1, t0+60, in, smReply)
		add(1, t0+70, out, smReply)
		add(1, t0+80, out, smHandle)
		add(1, t0+90, out, smServe)
	}
	for _, t0 := range []uint64{6000, 8000} { // after it
		add(1, t0, in, smServe)
		add(1, t0+10, in, smHandle)
		add(1, t0+30, in, smCheck)
		add(1, t0+40, out, smCheck)
		add(1, t0+60, in, smReply)
		add(1, t0+70, out, smReply)
		add(1, t0+80, out, smHandle)
		add(1, t0+90, out, smServe)
	}
	for _, t0 := range []uint64{2000, 7000} {
		add(2, t0, in, smLoop)
		add(2, t0+10, in, smLog)
		add(2, t0+20, out, smLog)
		add(2, t0+30, out, smLoop)
	}
	return evs
}

func shedMarkProfile(t *testing.T, set fdr.Shed) (*Profile, string) {
	t.Helper()
	p := NewProfile(fdr.Header{Version: 5, CycleFrequency: 1e9}, ProfileOptions{})
	evs := shedMarkEvents(set)
	for i := range evs {
		p.Add(&evs[i])
	}
	p.Finish()
	var folded bytes.Buffer
	if err := p.WriteFolded(&folded, nil, ValueCount); err != nil {
		t.Fatal(err)
	}
	return p, folded.String()
}

// TestShedMarksWhereItCanAffect: the shed event says nothing of lookup's
// callers or callees ("unknown"), but the window shows handle calling it
// and it calling check before it was shed. So after the shed handle's
// self time may include it and handle > check may be handle > lookup >
// check: both marked. handle > reply, a path the window shows before the
// shed, is not; nor is the other goroutine's loop > log, nor loop's self
// time, nor handle > check before the shed.
func TestShedMarksWhereItCanAffect(t *testing.T) {
	p, folded := shedMarkProfile(t, fdr.Shed{FuncID: smLookup, At: smShedAt})
	for _, want := range []string{
		"#1;#2 [self may include shed calls];#4 [may skip shed calls] 2\n",
		"#1;#2 [self may include shed calls];#5 4\n",
		"#6;#7 2\n",
	} {
		if !strings.Contains(folded, want) {
			t.Errorf("folded lacks %q:\n%s", want, folded)
		}
	}
	for _, fn := range []uint32{smServe, smReply, smLoop, smLog, smCheck} {
		if p.SelfMayIncludeShed(fn) {
			t.Errorf("#%d's self time marked: it calls nothing shed", fn)
		}
	}
	if !p.SelfMayIncludeShed(smHandle) {
		t.Error("handle's self time not marked")
	}
}

// TestShedMarksNoneSeenIsNoProof: the runtime saw lookup called by
// handle and calling nothing ("calls: none seen"), and the window holds
// none of lookup's calls. A call of check under handle after the shed,
// a path the window never showed before it, may have been lookup's: it
// is marked, while handle > reply, which the window shows before the
// shed, is not.
func TestShedMarksNoneSeenIsNoProof(t *testing.T) {
	set := fdr.Shed{FuncID: smLookup, At: smShedAt, Callers: []uint32{smHandle}, Callees: []uint32{}}
	p := NewProfile(fdr.Header{Version: 5, CycleFrequency: 1e9}, ProfileOptions{})
	for _, e := range shedMarkEvents(set) {
		if e.FuncID == smLookup || e.FuncID == smCheck && e.TSC < smShedAt {
			continue // no call of lookup, nor its check, in the window
		}
		p.Add(&e)
	}
	p.Finish()
	var folded bytes.Buffer
	if err := p.WriteFolded(&folded, nil, ValueCount); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"#1;#2 [self may include shed calls];#4 [may skip shed calls] 2\n",
		"#1;#2 [self may include shed calls];#5 4\n",
	} {
		if !strings.Contains(folded.String(), want) {
			t.Errorf("folded lacks %q:\n%s", want, folded.String())
		}
	}
}

// TestShedMarksUnknownCallers: a shed function nobody was seen calling
// marks no row; the notes say it once.
func TestShedMarksUnknownCallers(t *testing.T) {
	p := NewProfile(fdr.Header{Version: 5, CycleFrequency: 1e9}, ProfileOptions{})
	for _, e := range shedMarkEvents(fdr.Shed{FuncID: 42, At: smShedAt}) {
		p.Add(&e)
	}
	p.Finish()
	var top bytes.Buffer
	if err := p.WriteTop(&top, nil, 0); err != nil {
		t.Fatal(err)
	}
	out := top.String()
	if strings.Contains(out, markSelfShed+"]") || strings.Contains(out, markSkipShed+"]") {
		t.Errorf("rows marked for a function nobody was seen calling:\n%s", out)
	}
	if !strings.Contains(out, "Seen called by no traced function (their time is in no row this can name): #42.") {
		t.Errorf("the notes do not say #42's callers are unknown:\n%s", out)
	}
}

// manyShed is a shed set of n functions with names as long as a Go
// service's, all seen called by handle (2) in a window of many calls.
func manyShed(t *testing.T, n int) (*instrmap.Map, []Event) {
	t.Helper()
	var funcs []instrmap.Func
	for id := 1; id <= 200; id++ {
		funcs = append(funcs, instrmap.Func{ID: uint32(id), Name: fmt.Sprintf("github.com/example/service/internal/storage.(*Engine).step%03d", id)})
	}
	var b bytes.Buffer
	if _, err := instrmap.Write(&b, funcs); err != nil {
		t.Fatal(err)
	}
	m, err := instrmap.ParseMap(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var evs []Event
	for i := range n {
		evs = append(evs, Event{Type: fdr.EventCustom, TID: 9, TSC: 1, Data: fdr.AppendShedPayload(nil,
			fdr.Shed{FuncID: uint32(100 + i), At: 10, Callers: []uint32{2}, Callees: []uint32{}, Share: 0.01, Budget: 0.02})})
	}
	tsc := uint64(100)
	for r := range 5000 {
		for _, fn := range []uint32{1, 2, uint32(3 + r%5)} {
			evs = append(evs, Event{Type: fdr.EventEnter, TID: int32(1 + r%8), TSC: tsc, FuncID: fn})
			tsc += 7
		}
		for _, fn := range []uint32{uint32(3 + r%5), 2, 1} {
			evs = append(evs, Event{Type: fdr.EventExit, TID: int32(1 + r%8), TSC: tsc, FuncID: fn})
			tsc += 7
		}
	}
	return m, evs
}

// perfettoOf writes evs as `goxray perfetto` does.
func perfettoOf(t *testing.T, m *instrmap.Map, evs []Event) []byte {
	t.Helper()
	scan := NewPerfettoScan(fdr.Header{Version: 5, CycleFrequency: 1e9})
	for i := range evs {
		scan.Add(&evs[i])
	}
	var b bytes.Buffer
	pw := NewPerfettoWriter(&b, scan, m)
	for i := range evs {
		pw.Add(&evs[i])
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestShedMarksStaySmall: with 50 functions shed, all called by the
// handler of every request, perfetto's output stays within twice its
// size with nothing shed, and top's notes on the shed set within a few
// lines (every function's details on request).
func TestShedMarksStaySmall(t *testing.T) {
	m, evs := manyShed(t, 50)
	plain := perfettoOf(t, m, evs[50:])
	shed := perfettoOf(t, m, evs)
	if len(shed) > 2*len(plain) {
		t.Errorf("perfetto: %d bytes with 50 functions shed, %d with none: more than twice", len(shed), len(plain))
	}
	t.Logf("perfetto: %d bytes with 50 functions shed, %d with none", len(shed), len(plain))
	if !bytes.Contains(shed, []byte(markSelfShed)) {
		t.Error("perfetto: the handler's slices are not marked")
	}
	for _, details := range []bool{false, true} {
		p := NewProfile(fdr.Header{Version: 5, CycleFrequency: 1e9}, ProfileOptions{ShedDetails: details})
		for i := range evs {
			p.Add(&evs[i])
		}
		p.Finish()
		notes := p.Notes(m)
		lines := strings.Count(notes, "\n")
		switch {
		case !details && (lines > 5 || !strings.Contains(notes, "50 functions") || !strings.Contains(notes, "and 45 more")):
			t.Errorf("the notes on 50 shed functions take %d lines:\n%s", lines, notes)
		case details && (lines < 100 || !strings.Contains(notes, "step149")):
			t.Errorf("with details, the notes do not list every function:\n%s", notes)
		}
	}
}
