package xray

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	xrt "github.com/goxray/xray/internal/engine"
)

// TestStatisticsCoversRuntimeStats: the documented Statistics has every
// field of the runtime's Stats, and statistics copies each one (every
// field is set to a distinct non-zero value and must arrive).
func TestStatisticsCoversRuntimeStats(t *testing.T) {
	var in xrt.Stats
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
