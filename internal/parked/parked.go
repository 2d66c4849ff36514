// Package parked lets a test wait for a goroutine to park (block in the
// Go scheduler) for a given reason, instead of sleeping for a time it
// hopes is long enough: on a loaded machine a goroutine may take any
// time to get where the test expects it, and a test that starts timing a
// wait only once the waiter is seen parked measures at least that wait,
// however late the waiter came.
//
// It reads runtime.Stack of every goroutine, which stops the world for a
// moment each time: for tests only.
package parked

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"time"
)

// Self returns the calling goroutine's id, as runtime.Stack names it.
func Self() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b, _ = bytes.CutPrefix(b, []byte("goroutine "))
	b, _, _ = bytes.Cut(b, []byte(" "))
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		panic("parked: runtime.Stack's header has no goroutine id: " + string(buf[:]))
	}
	return id
}

// GiveUp is how long Wait looks before it says the goroutine never
// parked: long enough that only a goroutine that will never park
// reaches it, on however loaded a machine.
const GiveUp = time.Minute

// Wait returns once goroutine g is parked for reason, the text of its
// runtime.Stack header ("goroutine 7 [chan receive]:"): "chan receive",
// "chan send", "select", "sync.Mutex.Lock", "IO wait", "sleep"… It
// returns an error when g is gone, or not parked so after GiveUp.
func Wait(g uint64, reason string) error {
	head := []byte("goroutine " + strconv.FormatUint(g, 10) + " [")
	buf := make([]byte, 64<<10)
	give := time.Now().Add(GiveUp)
	for {
		n := runtime.Stack(buf, true)
		if n == len(buf) {
			buf = make([]byte, 2*len(buf))
			continue
		}
		st, ok := state(buf[:n], head)
		if !ok {
			return fmt.Errorf("goroutine %d is gone: it never parked on %s", g, reason)
		}
		if st == reason {
			return nil
		}
		if time.Now().After(give) {
			return fmt.Errorf("goroutine %d is not parked on %s after %v: it is %s", g, reason, GiveUp, st)
		}
		runtime.Gosched()
	}
}

// state returns the state in brackets of the goroutine whose header
// starts with head, without the time it has been in it (", 2 minutes").
func state(all, head []byte) (string, bool) {
	for len(all) > 0 {
		var line []byte
		line, all, _ = bytes.Cut(all, []byte("\n"))
		if rest, ok := bytes.CutPrefix(line, head); ok {
			st, _, _ := bytes.Cut(rest, []byte("]"))
			st, _, _ = bytes.Cut(st, []byte(","))
			return string(st), true
		}
	}
	return "", false
}
