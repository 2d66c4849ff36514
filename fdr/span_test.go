package fdr

import (
	"strings"
	"testing"
)

func TestSpanPayloadRoundTrip(t *testing.T) {
	s := Span{
		TraceID: [16]byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:  [8]byte{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
	}
	b := AppendSpanPayload(make([]byte, 0, SpanPayloadSize), s)
	if got, want := string(b), "goxray.span=4bf92f3577b34da6a3ce929d0e0e4736/00f067aa0ba902b7 at=start"; got != want {
		t.Fatalf("payload %q, want %q", got, want)
	}
	if len(b) != SpanPayloadSize {
		t.Fatalf("len %d, SpanPayloadSize %d", len(b), SpanPayloadSize)
	}
	got, ok := ParseSpan(b)
	if !ok || got != s {
		t.Fatalf("ParseSpan = %+v, %v; want %+v", got, ok, s)
	}
	s.End = true
	got, ok = ParseSpan(AppendSpanPayload(nil, s))
	if !ok || got != s {
		t.Fatalf("end event: ParseSpan = %+v, %v; want %+v", got, ok, s)
	}
	if n := testing.AllocsPerRun(100, func() { b = AppendSpanPayload(b[:0], s) }); n != 0 {
		t.Errorf("AppendSpanPayload allocates %v times with room in b", n)
	}
}

func TestParseSpanRejects(t *testing.T) {
	const ok = "goxray.span=4bf92f3577b34da6a3ce929d0e0e4736/00f067aa0ba902b7"
	if _, good := ParseSpan([]byte(ok + " at=end x=y")); !good {
		t.Fatal("an unknown field made a payload invalid")
	}
	for _, bad := range []string{
		"",
		ok,                // no at field
		ok + " at=middle", // unknown value
		ok + " at=start ", // empty last field
		ok + "  at=start", // empty field
		ok + " at=",       // empty value
		ok + "at=start",   // no separator
		strings.ToUpper(ok[:12]) + ok[12:] + " at=start",
		strings.Replace(ok, "4bf9", "4BF9", 1) + " at=start", // upper-case hex
		strings.Replace(ok, "/", "-", 1) + " at=start",
		"goxray.span=00000000000000000000000000000000/00f067aa0ba902b7 at=start",
		"goxray.span=4bf92f3577b34da6a3ce929d0e0e4736/0000000000000000 at=start",
		"goxray.parent=17",
	} {
		if s, good := ParseSpan([]byte(bad)); good {
			t.Errorf("ParseSpan(%q) = %+v, true; want false", bad, s)
		}
	}
}

func FuzzParseSpan(f *testing.F) {
	f.Add([]byte("goxray.span=4bf92f3577b34da6a3ce929d0e0e4736/00f067aa0ba902b7 at=start"))
	f.Add([]byte("goxray.span=4bf92f3577b34da6a3ce929d0e0e4736/00f067aa0ba902b7 at=end k=v"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, ok := ParseSpan(data)
		if !ok {
			return
		}
		again, ok := ParseSpan(AppendSpanPayload(nil, s))
		if !ok || again != s {
			t.Fatalf("%q parsed as %+v, which does not round-trip (%+v, %v)", data, s, again, ok)
		}
	})
}
