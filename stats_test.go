package xray

import (
	"reflect"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goxray/xray/internal/engine"
)

// TestStatisticsCoversRuntimeStats: the documented Statistics has every
// field of the runtime's Stats, and statistics copies each one (every
// field is set to a distinct non-zero value and must arrive).
func TestStatisticsCoversRuntimeStats(t *testing.T) {
	var in engine.Stats
	v := reflect.ValueOf(&in).Elem()
	n := uint64(0)
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		n++
		switch v.Kind() {
		case reflect.Struct:
			if v.Type() == reflect.TypeFor[time.Time]() {
				v.Set(reflect.ValueOf(time.Unix(int64(n), 0)))
				return
			}
			for i := range v.NumField() {
				fill(v.Field(i))
			}
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int, reflect.Int64:
			v.SetInt(int64(n))
		case reflect.Uint64:
			v.SetUint(n)
		case reflect.String:
			v.SetString(string(rune('a' + n%26)))
		case reflect.Float64:
			v.SetFloat(float64(n) + 0.5)
		case reflect.Slice:
			if v.Type() != reflect.TypeFor[[]uint32]() {
				t.Fatalf("field of type %v: extend this test", v.Type())
			}
			v.Set(reflect.ValueOf([]uint32{uint32(1<<27 + n)})) // an id nobody named
		default:
			t.Fatalf("field of kind %v: extend this test", v.Kind())
		}
	}
	fill(v)
	out := reflect.ValueOf(statistics(in))
	if out.NumField() != v.NumField() {
		t.Errorf("Statistics has %d fields, runtime.Stats %d", out.NumField(), v.NumField())
	}
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		f := out.FieldByName(name)
		if !f.IsValid() {
			t.Errorf("Statistics lacks %s", name)
			continue
		}
		if ids, ok := v.Field(i).Interface().([]uint32); ok {
			// Function ids become names: the decimal id for one that has none.
			if names, _ := f.Interface().([]string); len(names) != 1 || names[0] != strconv.FormatUint(uint64(ids[0]), 10) {
				t.Errorf("%s: %v from %v", name, f, ids)
			}
			continue
		}
		if !reflect.DeepEqual(reflect.ValueOf(f.Interface()).Convert(v.Field(i).Type()).Interface(), v.Field(i).Interface()) {
			t.Errorf("%s not copied: %v, want %v", name, f, v.Field(i))
		}
	}
	if got, want := statistics(in).Drops.Total(), in.Drops.Total(); got != want {
		t.Errorf("Drops.Total %d, want %d", got, want)
	}
}

// TestStatsDuringStopsFinalFile: while Stop writes the final file, Stats
// reads the stopped session's counters, not an empty session's: a monitor
// scraping them then would see every counter reset to zero. The arena
// holds enough records that the final file takes a while to write, and a
// goroutine reads Stats throughout Stop.
func TestStatsDuringStopsFinalFile(t *testing.T) {
	start(t, Options{BufferSize: 1 << 20, BufferCount: 64, IgnoreEnv: true})
	record(2000000)
	recorded := Stats().Records
	var stop atomic.Bool
	var reads, empty atomic.Int64
	polling, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		close(polling)
		for !stop.Load() {
			if st := Stats(); !st.Running {
				reads.Add(1)
				if st.Records < recorded || st.Started.IsZero() {
					empty.Add(1)
				}
			}
		}
	}()
	<-polling
	if err := Stop(); err != nil {
		t.Fatal(err)
	}
	stop.Store(true)
	<-done
	if empty.Load() != 0 {
		t.Errorf("%d of %d reads of Stats after Stop began showed fewer than the %d records made, or no start time", empty.Load(), reads.Load(), recorded)
	}
	if st := Stats(); st.Flushes != 1 || st.Records < recorded {
		t.Errorf("after Stop: %d flushes, %d records; want the final file and %d", st.Flushes, st.Records, recorded)
	}
}
