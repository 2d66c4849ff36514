package fdr

import (
	"bytes"
	"testing"
)

// The expected bytes below are written out by hand from the layout tables
// (facts §2.2, §2.3), not computed with the encoders.

func TestAppendHeaderBytes(t *testing.T) {
	tests := []struct {
		name string
		h    Header
		want []byte
	}{
		{
			name: "compiler-rt v5 with fallback clock",
			h:    Header{Version: 5, Type: FileTypeFDR, ConstantTSC: true, NonstopTSC: true, CycleFrequency: 1e9, BufferSize: 16384},
			want: []byte{
				0x05, 0x00, 0x01, 0x00, 0x03, 0x00, 0x00, 0x00,
				0x00, 0xca, 0x9a, 0x3b, 0x00, 0x00, 0x00, 0x00,
				0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
				0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			},
		},
		{
			name: "all fields distinct",
			h:    Header{Version: 0x0102, Type: 0x0304, NonstopTSC: true, CycleFrequency: 0x0102030405060708, BufferSize: 0x1122334455667788},
			want: []byte{
				0x02, 0x01, 0x04, 0x03, 0x02, 0x00, 0x00, 0x00,
				0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
				0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
				0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			},
		},
		{
			name: "constant tsc only, version 1",
			h:    Header{Version: 1, Type: FileTypeFDR, ConstantTSC: true},
			want: []byte{
				0x01, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00,
				0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
				0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
				0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := []byte{0xee}
			got := AppendHeader(prefix, tt.h)
			if !bytes.Equal(got[1:], tt.want) || got[0] != 0xee {
				t.Fatalf("AppendHeader:\n got % x\nwant ee % x", got, tt.want)
			}
			dirty := bytes.Repeat([]byte{0xaa}, HeaderSize)
			PutHeader(dirty, tt.h)
			if !bytes.Equal(dirty, tt.want) {
				t.Fatalf("PutHeader over 0xaa:\n got % x\nwant % x", dirty, tt.want)
			}
		})
	}
}

func TestEncodeRecordBytes(t *testing.T) {
	const tsc = 0x1122334455667788
	tests := []struct {
		name   string
		append func([]byte) []byte
		put    func([]byte) // nil for records with a payload
		want   []byte
	}{
		{
			name:   "NewBuffer",
			append: func(b []byte) []byte { return AppendNewBuffer(b, -2) },
			put:    func(b []byte) { PutNewBuffer(b, -2) },
			want:   []byte{0x01, 0xfe, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		},
		{
			name:   "EndOfBuffer",
			append: AppendEndOfBuffer,
			put:    PutEndOfBuffer,
			want:   []byte{0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		},
		{
			name:   "NewCPUId",
			append: func(b []byte) []byte { return AppendNewCPUId(b, 0x0102, tsc) },
			put:    func(b []byte) { PutNewCPUId(b, 0x0102, tsc) },
			want:   []byte{0x05, 0x02, 0x01, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0, 0, 0, 0, 0},
		},
		{
			name:   "TSCWrap",
			append: func(b []byte) []byte { return AppendTSCWrap(b, tsc) },
			put:    func(b []byte) { PutTSCWrap(b, tsc) },
			want:   []byte{0x07, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0, 0, 0, 0, 0, 0, 0},
		},
		{
			name:   "WallClock",
			append: func(b []byte) []byte { return AppendWallClock(b, 0x0102030405060708, 0xaabbccdd) },
			put:    func(b []byte) { PutWallClock(b, 0x0102030405060708, 0xaabbccdd) },
			want:   []byte{0x09, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0xdd, 0xcc, 0xbb, 0xaa, 0, 0, 0},
		},
		{
			name:   "CallArgument",
			append: func(b []byte) []byte { return AppendCallArgument(b, 0xfedcba9876543210) },
			put:    func(b []byte) { PutCallArgument(b, 0xfedcba9876543210) },
			want:   []byte{0x0d, 0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, 0, 0, 0, 0, 0, 0, 0},
		},
		{
			name:   "BufferExtents",
			append: func(b []byte) []byte { return AppendBufferExtents(b, 0x0807060504030201) },
			put:    func(b []byte) { PutBufferExtents(b, 0x0807060504030201) },
			want:   []byte{0x0f, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0, 0, 0, 0, 0, 0, 0},
		},
		{
			name:   "PID",
			append: func(b []byte) []byte { return AppendPID(b, 0x01020304) },
			put:    func(b []byte) { PutPID(b, 0x01020304) },
			want:   []byte{0x13, 0x04, 0x03, 0x02, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		},
		{
			name:   "PID negative",
			append: func(b []byte) []byte { return AppendPID(b, -1) },
			put:    func(b []byte) { PutPID(b, -1) },
			want:   []byte{0x13, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		},
		{
			name:   "CustomEvent v5",
			append: func(b []byte) []byte { return AppendCustomEvent(b, -2, []byte("abc")) },
			put:    func(b []byte) { PutCustomEventMarker(b, 3, -2) },
			want: []byte{0x0b, 0x03, 0x00, 0x00, 0x00, 0xfe, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0,
				'a', 'b', 'c'},
		},
		{
			name:   "CustomEvent v5 positive delta",
			append: func(b []byte) []byte { return AppendCustomEvent(b, 0x01020304, []byte{0}) },
			put:    func(b []byte) { PutCustomEventMarker(b, 1, 0x01020304) },
			want: []byte{0x0b, 0x01, 0x00, 0x00, 0x00, 0x04, 0x03, 0x02, 0x01, 0, 0, 0, 0, 0, 0, 0,
				0x00},
		},
		{
			name:   "CustomEvent v1-3",
			append: func(b []byte) []byte { return AppendCustomEventV1(b, tsc, []byte("ab")) },
			put:    func(b []byte) { PutCustomEventMarkerV1(b, 2, tsc) },
			want: []byte{0x0b, 0x02, 0x00, 0x00, 0x00, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0, 0, 0,
				'a', 'b'},
		},
		{
			name:   "CustomEvent v4",
			append: func(b []byte) []byte { return AppendCustomEventV4(b, tsc, 0x0a0b, []byte("z")) },
			put:    func(b []byte) { PutCustomEventMarkerV4(b, 1, tsc, 0x0a0b) },
			want: []byte{0x0b, 0x01, 0x00, 0x00, 0x00, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x0b, 0x0a, 0,
				'z'},
		},
		{
			name:   "TypedEvent",
			append: func(b []byte) []byte { return AppendTypedEvent(b, 0x01020304, 0xbeef, []byte("q")) },
			put:    func(b []byte) { PutTypedEventMarker(b, 1, 0x01020304, 0xbeef) },
			want: []byte{0x11, 0x01, 0x00, 0x00, 0x00, 0x04, 0x03, 0x02, 0x01, 0xef, 0xbe, 0, 0, 0, 0, 0,
				'q'},
		},
		{
			name:   "TypedEvent negative delta",
			append: func(b []byte) []byte { return AppendTypedEvent(b, -1, 1, []byte("xy")) },
			put:    func(b []byte) { PutTypedEventMarker(b, 2, -1, 1) },
			want: []byte{0x11, 0x02, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00, 0, 0, 0, 0, 0,
				'x', 'y'},
		},
		{
			name:   "Function Enter",
			append: func(b []byte) []byte { return AppendFunction(b, Enter, 1, 0) },
			put:    func(b []byte) { PutFunction(b, Enter, 1, 0) },
			want:   []byte{0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},
		},
		{
			name:   "Function Exit",
			append: func(b []byte) []byte { return AppendFunction(b, Exit, 0x0abcdef, 0x11223344) },
			put:    func(b []byte) { PutFunction(b, Exit, 0x0abcdef, 0x11223344) },
			want:   []byte{0xf2, 0xde, 0xbc, 0x0a, 0x44, 0x33, 0x22, 0x11},
		},
		{
			name:   "Function TailExit",
			append: func(b []byte) []byte { return AppendFunction(b, TailExit, 3, 5) },
			put:    func(b []byte) { PutFunction(b, TailExit, 3, 5) },
			want:   []byte{0x34, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00},
		},
		{
			name:   "Function EnterArgs max id and delta",
			append: func(b []byte) []byte { return AppendFunction(b, EnterArgs, MaxFuncID, 0xffffffff) },
			put:    func(b []byte) { PutFunction(b, EnterArgs, MaxFuncID, 0xffffffff) },
			want:   []byte{0xf6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		},
		{
			name:   "Function id beyond 28 bits is truncated",
			append: func(b []byte) []byte { return AppendFunction(b, Enter, 0x10000002, 0) },
			put:    func(b []byte) { PutFunction(b, Enter, 0x10000002, 0) },
			want:   []byte{0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},
		},
		{
			name:   "Function invalid action 5 (for negative tests)",
			append: func(b []byte) []byte { return AppendFunction(b, Action(5), 1, 0) },
			put:    func(b []byte) { PutFunction(b, Action(5), 1, 0) },
			want:   []byte{0x1a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Appending after existing bytes must leave them alone.
			got := tt.append([]byte{0xee, 0xee})
			if !bytes.Equal(got[:2], []byte{0xee, 0xee}) || !bytes.Equal(got[2:], tt.want) {
				t.Fatalf("Append:\n got % x\nwant ee ee % x", got, tt.want)
			}
			// Put into a dirty buffer: every unused byte must come out zero.
			n := MetadataSize
			if tt.want[0]&1 == 0 {
				n = FunctionSize
			}
			dirty := bytes.Repeat([]byte{0xaa}, n+1)
			tt.put(dirty)
			if !bytes.Equal(dirty[:n], tt.want[:n]) || dirty[n] != 0xaa {
				t.Fatalf("Put over 0xaa:\n got % x\nwant % x aa", dirty, tt.want[:n])
			}
		})
	}
}

func TestFunctionWord(t *testing.T) {
	tests := []struct {
		a     Action
		id    uint32
		delta uint32
		want  uint64
	}{
		{Enter, 1, 0, 0x0000000000000010},
		{Exit, 0x0abcdef, 0x11223344, 0x112233440abcdef2},
		{TailExit, 3, 5, 0x0000000500000034},
		{EnterArgs, MaxFuncID, 0xffffffff, 0xfffffffffffffff6},
	}
	for _, tt := range tests {
		if got := FunctionWord(tt.a, tt.id, tt.delta); got != tt.want {
			t.Errorf("FunctionWord(%v, %#x, %#x) = %#016x, want %#016x", tt.a, tt.id, tt.delta, got, tt.want)
		}
	}
}

func TestPutAllocatesNothing(t *testing.T) {
	var buf [MetadataSize]byte
	allocs := testing.AllocsPerRun(100, func() {
		PutFunction(buf[:], Enter, 7, 9)
		PutNewCPUId(buf[:], 1, 2)
		PutTSCWrap(buf[:], 3)
		PutCustomEventMarker(buf[:], 1, 2)
	})
	if allocs != 0 {
		t.Fatalf("Put* allocate %v times per run", allocs)
	}
}

func TestStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{KindNewBuffer.String(), "NewBuffer"},
		{KindPID.String(), "PID"},
		{KindBufferExtents.String(), "BufferExtents"},
		{MetadataKind(10).String(), "MetadataKind(10)"},
		{Enter.String(), "Enter"},
		{EnterArgs.String(), "EnterArgs"},
		{Action(6).String(), "Action(6)"},
		{EventTyped.String(), "TypedEvent"},
		{EventType(9).String(), "EventType(9)"},
		{(&FormatError{Offset: 0x1a0, Rule: RuleBlockEnd, Msg: "m"}).Error(), "fdr: offset 0x1a0: block-end: m"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// TestRecordReadersInvertWriters: each record-level reader returns what
// its writer put, at the edges of each field's range.
func TestRecordReadersInvertWriters(t *testing.T) {
	rec := make([]byte, MetadataSize)
	for _, tc := range []struct {
		cpu uint16
		tsc uint64
	}{{0, 0}, {1, 1}, {0xffff, 1<<64 - 1}, {0x1234, 0x0123456789abcdef}} {
		PutNewCPUId(rec, tc.cpu, tc.tsc)
		if cpu, tsc := NewCPUIdFields(rec); cpu != tc.cpu || tsc != tc.tsc {
			t.Errorf("NewCPUId(%d, %#x) read back as (%d, %#x)", tc.cpu, tc.tsc, cpu, tsc)
		}
		PutTSCWrap(rec, tc.tsc)
		if got := TSCWrapBase(rec); got != tc.tsc {
			t.Errorf("TSCWrap(%#x) read back as %#x", tc.tsc, got)
		}
	}
	for _, tc := range []struct{ size, delta int32 }{{1, 0}, {1 << 30, -1}, {7, 1<<31 - 1}, {100, -1 << 31}} {
		PutCustomEventMarker(rec, tc.size, tc.delta)
		if s, d := EventSize(rec), EventDelta(rec); s != tc.size || d != tc.delta {
			t.Errorf("custom event (%d, %d) read back as (%d, %d)", tc.size, tc.delta, s, d)
		}
		PutTypedEventMarker(rec, tc.size, tc.delta, 0xbeef)
		if s, d := EventSize(rec), EventDelta(rec); s != tc.size || d != tc.delta {
			t.Errorf("typed event (%d, %d) read back as (%d, %d)", tc.size, tc.delta, s, d)
		}
		PutCustomEventMarkerV1(rec, tc.size, 99)
		if s := EventSize(rec); s != tc.size {
			t.Errorf("v1 custom event size %d read back as %d", tc.size, s)
		}
	}
}
