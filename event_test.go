package xray

import (
	"bytes"
	"testing"

	"github.com/goxray/xray/fdr"
)

// TestEventPayloadLimit: Event's documented limit, the buffer size less
// 80 bytes: a payload of that size is recorded and reaches the file
// whole, one byte more is dropped and counted.
func TestEventPayloadLimit(t *testing.T) {
	for _, size := range []int{4096, 8192} {
		start(t, Options{BufferSize: size})
		largest := bytes.Repeat([]byte{'x'}, size-80)
		Event(largest)
		Event(make([]byte, size-79))
		if st := Stats(); st.Drops.OversizedEvent != 1 {
			t.Errorf("buffer size %d: %d events dropped as oversized, want 1", size, st.Drops.OversizedEvent)
		}
		path, err := Flush()
		if err != nil {
			t.Fatal(err)
		}
		if err := Stop(); err != nil {
			t.Fatal(err)
		}
		f, err := fdr.ParseFileStrict(path)
		if err != nil {
			t.Fatal(err)
		}
		ths, err := f.Threads()
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, th := range ths {
			for _, e := range th.Events {
				if bytes.Equal(e.Data, largest) {
					found++
				}
			}
		}
		if found != 1 {
			t.Errorf("buffer size %d: the %d-byte event is in the file %d times, want once", size, len(largest), found)
		}
	}
}
