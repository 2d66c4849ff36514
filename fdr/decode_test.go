package fdr

import (
	"errors"
	"io"
	"reflect"
	"testing"
)

// decodeAll decodes every record of data, returning the records and the
// error that stopped decoding (nil at a clean end).
func decodeAll(d *Decoder) ([]Raw, error) {
	var rs []Raw
	for {
		var r Raw
		err := d.Next(&r)
		if err == io.EOF {
			return rs, nil
		}
		if err != nil {
			return rs, err
		}
		rs = append(rs, r)
	}
}

func TestDecodeEachRecord(t *testing.T) {
	// One record of each kind, written out by hand, decoded with a base of
	// 100 to check that offsets include it.
	tests := []struct {
		name    string
		version uint16
		in      []byte
		want    Raw
	}{
		{"NewBuffer", 5, []byte{0x01, 0xfe, 0xff, 0xff, 0xff, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9},
			Raw{Offset: 100, Size: 16, IsMetadata: true, Kind: KindNewBuffer, TID: -2}},
		{"EndOfBuffer v1", 1, []byte{0x03, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9},
			Raw{Offset: 100, Size: 16, IsMetadata: true, Kind: KindEndOfBuffer}},
		{"NewCPUId", 5, []byte{0x05, 0x02, 0x01, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 9, 9, 9, 9, 9},
			Raw{Offset: 100, Size: 16, IsMetadata: true, Kind: KindNewCPUId, CPU: 0x0102, TSC: 0x1122334455667788}},
		{"TSCWrap", 5, []byte{0x07, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 9, 9, 9, 9, 9, 9, 9},
			Raw{Offset: 100, Size: 16, IsMetadata: true, Kind: KindTSCWrap, TSC: 0x1122334455667788}},
		{"WallClock", 5, []byte{0x09, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0xdd, 0xcc, 0xbb, 0xaa, 9, 9, 9},
			Raw{Offset: 100, Size: 16, IsMetadata: true, Kind: KindWallClock, Sec: 0x0102030405060708, Usec: 0xaabbccdd}},
		{"CallArgument", 5, []byte{0x0d, 0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, 9, 9, 9, 9, 9, 9, 9},
			Raw{Offset: 100, Size: 16, IsMetadata: true, Kind: KindCallArgument, Arg: 0xfedcba9876543210}},
		{"BufferExtents v2", 2, []byte{0x0f, 0x01, 0x02, 0, 0, 0, 0, 0, 0, 9, 9, 9, 9, 9, 9, 9},
			Raw{Offset: 100, Size: 16, IsMetadata: true, Kind: KindBufferExtents, Extents: 0x0201}},
		{"PID", 5, []byte{0x13, 0x04, 0x03, 0x02, 0x01, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9},
			Raw{Offset: 100, Size: 16, IsMetadata: true, Kind: KindPID, PID: 0x01020304}},
		{"CustomEvent v5", 5, []byte{0x0b, 0x03, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 9, 9, 9, 9, 9, 9, 9, 'a', 'b', 'c'},
			Raw{Offset: 100, Size: 19, IsMetadata: true, Kind: KindCustomEvent, EventDelta: -2, Payload: []byte("abc")}},
		{"CustomEvent v4", 4, []byte{0x0b, 0x01, 0, 0, 0, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x0b, 0x0a, 9, 'z'},
			Raw{Offset: 100, Size: 17, IsMetadata: true, Kind: KindCustomEvent, TSC: 0x1122334455667788, CPU: 0x0a0b, Payload: []byte("z")}},
		// Versions 1–3 call bytes 13–14 reserved, but llvm-xray reads a cpu
		// there anyway (measured: cpu 9 shown by `convert` for a v3 file).
		{"CustomEvent v3 reads the reserved cpu bytes", 3, []byte{0x0b, 0x01, 0, 0, 0, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x09, 0x00, 9, 'z'},
			Raw{Offset: 100, Size: 17, IsMetadata: true, Kind: KindCustomEvent, TSC: 0x1122334455667788, CPU: 9, Payload: []byte("z")}},
		{"TypedEvent", 5, []byte{0x11, 0x02, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xef, 0xbe, 9, 9, 9, 9, 9, 'x', 'y'},
			Raw{Offset: 100, Size: 18, IsMetadata: true, Kind: KindTypedEvent, EventDelta: -1, EventType: 0xbeef, Payload: []byte("xy")}},
		{"TypedEvent v1 same layout", 1, []byte{0x11, 0x01, 0, 0, 0, 0x05, 0, 0, 0, 0x02, 0x00, 9, 9, 9, 9, 9, 'x'},
			Raw{Offset: 100, Size: 17, IsMetadata: true, Kind: KindTypedEvent, EventDelta: 5, EventType: 2, Payload: []byte("x")}},
		{"Function Exit", 5, []byte{0xf2, 0xde, 0xbc, 0x0a, 0x44, 0x33, 0x22, 0x11},
			Raw{Offset: 100, Size: 8, Action: Exit, FuncID: 0x0abcdef, Delta: 0x11223344}},
		{"Function EnterArgs", 5, []byte{0xf6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
			Raw{Offset: 100, Size: 8, Action: EnterArgs, FuncID: MaxFuncID, Delta: 0xffffffff}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, err := decodeAll(NewBodyDecoder(tt.in, tt.version, 100))
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 1 || !reflect.DeepEqual(rs[0], tt.want) {
				t.Fatalf("got %+v\nwant %+v", rs, tt.want)
			}
		})
	}
}

func TestDecoderErrors(t *testing.T) {
	fn := AppendFunction(nil, Enter, 1, 0)
	tests := []struct {
		name    string
		version uint16
		in      []byte
		off     int64
		rule    string
	}{
		{"truncated function", 5, append(fn, 0x10, 0, 0), 8, RuleTruncated},
		{"truncated metadata", 5, append(fn, AppendNewCPUId(nil, 1, 2)[:15]...), 8, RuleTruncated},
		{"truncated extents count", 2, append(fn, AppendBufferExtents(nil, 1)[:8]...), 8, RuleTruncated},
		{"event payload past input", 5, append(fn, AppendCustomEvent(nil, 0, make([]byte, 10))[:25]...), 8, RuleTruncated},
		{"event size 0", 5, AppendCustomEvent(fn, 0, nil), 8, RuleEventSize},
		{"typed event size 0", 5, AppendTypedEvent(fn, 0, 1, nil), 8, RuleEventSize},
		{"event size negative", 4, func() []byte {
			b := AppendCustomEventV4(fn, 0, 0, nil)
			PutCustomEventMarkerV4(b[8:], -5, 0, 0)
			return b
		}(), 8, RuleEventSize},
		{"metadata kind 10", 5, append(fn, 0x15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), 8, RuleMetadataKind},
		{"metadata kind 127", 5, append(fn, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), 8, RuleMetadataKind},
		{"function action 4", 5, AppendFunction(fn, Action(4), 1, 0), 8, RuleFunctionAction},
		{"function action 7", 5, AppendFunction(fn, Action(7), 1, 0), 8, RuleFunctionAction},
		{"EndOfBuffer v2", 2, AppendEndOfBuffer(fn), 8, RuleEndOfBuffer},
		{"EndOfBuffer v5", 5, AppendEndOfBuffer(fn), 8, RuleEndOfBuffer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewBodyDecoder(tt.in, tt.version, 1000)
			_, err := decodeAll(d)
			checkFormatError(t, err, 1000+tt.off, tt.rule)
			// The error is sticky.
			var r Raw
			if err2 := d.Next(&r); err2 != err {
				t.Fatalf("second Next = %v, want the same error %v", err2, err)
			}
		})
	}
}

func checkFormatError(t *testing.T, err error, off int64, rule string) {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T), want *FormatError at %#x rule %s", err, err, off, rule)
	}
	if fe.Offset != off || fe.Rule != rule {
		t.Fatalf("error %v, want offset %#x rule %s", err, off, rule)
	}
}

func TestDecoderExtents(t *testing.T) {
	f1 := AppendFunction(nil, Enter, 1, 2)
	f2 := AppendFunction(nil, Exit, 1, 3)
	var in []byte
	in = append(in, 0, 0, 0x0e, 0) // filler skipped before the first extents (0x0e is not 0x0f)
	in = AppendBufferExtents(in, 16)
	in = append(in, f1...)
	in = append(in, f2...)
	in = append(in, 0x00, 0x10, 0xff) // filler between regions
	in = AppendBufferExtents(in, 8)
	in = append(in, f1...)

	d := NewDecoder(in, 5, 32)
	rs, err := decodeAll(d)
	if err != nil {
		t.Fatal(err)
	}
	if d.Offset() != int64(32+len(in)) {
		t.Fatalf("Offset() = %d after the input, want %d", d.Offset(), 32+len(in))
	}
	type rec struct {
		off, skipped int
		extents      bool
	}
	var got []rec
	for _, r := range rs {
		got = append(got, rec{r.Offset, r.Skipped, r.IsMetadata && r.Kind == KindBufferExtents})
	}
	want := []rec{{36, 4, true}, {52, 0, false}, {60, 0, false}, {71, 3, true}, {87, 0, false}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}

	// Version 2 decodes extents records but does not enforce them.
	v2 := AppendBufferExtents(nil, 0)
	v2 = append(v2, f1...)
	rs, err = decodeAll(NewDecoder(v2, 2, 0))
	if err != nil || len(rs) != 2 {
		t.Fatalf("v2: %d records, err %v", len(rs), err)
	}

	// Over-read: the second record straddles the 12-byte extent.
	over := AppendBufferExtents(nil, 12)
	over = append(over, f1...)
	over = append(over, f2...)
	_, err = decodeAll(NewDecoder(over, 3, 32))
	checkFormatError(t, err, 32+24, RuleExtentsOverRead)

	// An exhausted extent followed by bytes without 0x0f.
	tail := AppendBufferExtents(nil, 8)
	tail = append(tail, f1...)
	tail = append(tail, 0, 0, 0, 0)
	_, err = decodeAll(NewDecoder(tail, 4, 32))
	checkFormatError(t, err, 32+24, RuleExtentsMissing)

	// An extents record cut after its count ends the stream cleanly, as
	// in llvm-xray.
	cut := AppendBufferExtents(nil, 8)
	cut = append(cut, f1...)
	cut = append(cut, AppendBufferExtents(nil, 5)[:9]...)
	rs, err = decodeAll(NewDecoder(cut, 5, 0))
	if err != nil || len(rs) != 3 || rs[2].Extents != 5 {
		t.Fatalf("cut extents: %+v, err %v", rs, err)
	}
}

func TestDecoderNextAllocatesNothing(t *testing.T) {
	var in []byte
	in = AppendBufferExtents(in, 0) // patched below
	start := len(in)
	in = AppendNewBuffer(in, 1)
	in = AppendWallClock(in, 1, 2)
	in = AppendPID(in, 3)
	in = AppendNewCPUId(in, 1, 100)
	for i := range 50 {
		in = AppendFunction(in, Enter, uint32(i), 1)
		in = AppendCustomEvent(in, 1, []byte("payload"))
	}
	PutBufferExtents(in, uint64(len(in)-start))
	// Decoders are made outside the measured function: only Next counts.
	ds := make([]*Decoder, 0, 32)
	for range cap(ds) {
		ds = append(ds, NewDecoder(in, 5, 32))
	}
	var r Raw
	allocs := testing.AllocsPerRun(20, func() {
		d := ds[0]
		ds = ds[1:]
		n := 0
		for d.Next(&r) == nil {
			n++
		}
		if n != 105 {
			t.Fatalf("decoded %d records", n)
		}
	})
	if allocs != 0 {
		t.Fatalf("Next allocates %v times per pass", allocs)
	}
}
