package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/goxray/xray/bench/recjson/auto"
	"github.com/goxray/xray/bench/recjson/plain"
	"github.com/goxray/xray/bench/recjson/plaincopy"
	"github.com/goxray/xray/bench/recjson/skiploops"
)

// The recursive rows: a recursive-descent JSON validator whose mutually
// recursive functions (value, object, array, str, number) run once per
// value for a few nanoseconds each, plain and as goxray's instrumentation
// rewrites it (bench/recjson), with tracing off: by default (auto: the
// leaves str and number loop, so they stay traced) and with
// -xray.leaves=skip-loops (skiploops: they are left out). Their ratio is
// what the gates cost such code while nobody traces.

// recDocs are the documents: "records", 300 records of short strings,
// numbers, literals and small nested objects and arrays (a value every
// 8-9 bytes), and "tiny", the worst case, where nearly every value is one
// character, so that each call does only a few nanoseconds of work.
var recDocs = []struct {
	name string
	doc  []byte
}{
	{"records", recDoc(`{"id":%d,"name":"n%[1]d","ok":true,"gone":null,"v":-%[1]d.5e3,"tags":["a","b\n","c"],"at":{"x":%[1]d,"y":[1,2,[3,{}]]}}`)},
	{"tiny", recDoc(`[%d,1,2,3,[4,5,[6]],"a","b",true,null,{"k":[7,8,9]},[[],{}],-1,0.5,"\n",[false,[0]]]`)},
}

func recDoc(record string) []byte {
	var b strings.Builder
	b.WriteString("[")
	for i := range 300 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, record, i%10)
	}
	b.WriteString("]")
	return []byte(b.String())
}

var recSink bool

func TestRecursiveValidatorsAgree(t *testing.T) {
	ins := []string{`{}`, `[]`, ` 1 `, `"\u00e9\"x"`, `-0.5E+2`, `{"a":[1,{"b":null}]}`,
		``, `{`, `[1,]`, `{"a" 1}`, `01`, `1.`, `"\x"`, "\"\x01\"", `tru`, `[1] x`, `{"a":1,}`, `-`, `1e`}
	for _, d := range recDocs {
		ins = append(ins, string(d.doc))
	}
	for _, in := range ins {
		want := json.Valid([]byte(in))
		if got := plain.Valid([]byte(in)); got != want {
			t.Errorf("plain.Valid(%.40q) = %v, encoding/json says %v", in, got, want)
		}
		if got := auto.Valid([]byte(in)); got != want {
			t.Errorf("auto.Valid(%.40q) = %v, encoding/json says %v", in, got, want)
		}
		if got := skiploops.Valid([]byte(in)); got != want {
			t.Errorf("skiploops.Valid(%.40q) = %v, encoding/json says %v", in, got, want)
		}
		if got := plaincopy.Valid([]byte(in)); got != want {
			t.Errorf("plaincopy.Valid(%.40q) = %v, encoding/json says %v", in, got, want)
		}
	}
	for _, d := range recDocs {
		if !plain.Valid(d.doc) {
			t.Errorf("the %s document is not valid JSON", d.name)
		}
	}
}

// BenchmarkRecursive: the validator as written (plain) and as goxray's
// instrumentation rewrites it, with tracing off (autooff; skiploopsoff
// with -xray.leaves=skip-loops), on each document.
func BenchmarkRecursive(b *testing.B) {
	for _, d := range recDocs {
		for _, v := range []struct {
			name  string
			valid func([]byte) bool
		}{{"plain", plain.Valid}, {"autooff", auto.Valid}, {"skiploopsoff", skiploops.Valid}} {
			b.Run(d.name+"/"+v.name, func(b *testing.B) {
				b.SetBytes(int64(len(d.doc)))
				for b.Loop() {
					recSink = v.valid(d.doc)
				}
			})
		}
	}
}

// BenchmarkRecursiveOffRatio reports autooff's time over plain's on each
// document as the metric x-plain, measured in one loop that alternates
// the two, one document at a time, and compares the fastest of each:
// on a shared machine a stretch that another process interrupted is
// slower, never faster, so the minimum is the undisturbed time of both
// (a ratio of medians of separate rows mixes in whatever each row met).
func BenchmarkRecursiveOffRatio(b *testing.B) {
	offRatio(b, auto.Valid)
}

// BenchmarkRecursiveSkipLoopsOffRatio is BenchmarkRecursiveOffRatio for
// skiploopsoff, in a loop of its own that alternates it with plain, so
// that both rows measure the same way. Both ratios move by several
// percent with where the linker places each package's functions
// (bench/README.md, "Recursive descent").
func BenchmarkRecursiveSkipLoopsOffRatio(b *testing.B) {
	offRatio(b, skiploops.Valid)
}

// BenchmarkRecursivePlainCopyRatio is the A/A control of the two rows
// above: plain against a copy of itself in another package, measured the
// same way. Its distance from 1 is what code placement and the machine
// make of identical code, the resolution of the other two rows in the same
// binary.
func BenchmarkRecursivePlainCopyRatio(b *testing.B) {
	offRatio(b, plaincopy.Valid)
}

func offRatio(b *testing.B, instrumented func([]byte) bool) {
	for _, d := range recDocs {
		b.Run(d.name, func(b *testing.B) {
			best := [2]time.Duration{math.MaxInt64, math.MaxInt64}
			for b.Loop() {
				for k, f := range [2]func([]byte) bool{plain.Valid, instrumented} {
					t0 := time.Now()
					recSink = f(d.doc)
					best[k] = min(best[k], time.Since(t0))
				}
			}
			b.ReportMetric(float64(best[1])/float64(best[0]), "x-plain")
		})
	}
}

// BenchmarkRecursiveOn: the instrumented validator with tracing on (the
// governor off, so that every call is recorded): what a traced recursive
// descent costs per document, the dispatched functions' gated helpers
// included.
func BenchmarkRecursiveOn(b *testing.B) {
	for _, d := range recDocs {
		b.Run(d.name, func(b *testing.B) {
			start(b)
			b.SetBytes(int64(len(d.doc)))
			for b.Loop() {
				recSink = auto.Valid(d.doc)
			}
		})
	}
}
