package settings

import (
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/goxray/xray/internal/buffer"
)

// TestTableDescribesEveryValue: one row per field of Values, in order,
// each with what a reader needs: default, validation, adoption.
func TestTableDescribesEveryValue(t *testing.T) {
	ty := reflect.TypeFor[Values]()
	if ty.NumField() != len(Table) {
		t.Fatalf("Values has %d fields, Table %d rows", ty.NumField(), len(Table))
	}
	for i := range Table {
		e := &Table[i]
		if e.ID != ID(i) || e.Field != ty.Field(i).Name {
			t.Errorf("row %d: id %d field %q, want %q", i, e.ID, e.Field, ty.Field(i).Name)
		}
		if e.Default == "" || e.Valid == "" || e.Adopt == 0 {
			t.Errorf("%s: default %q, valid %q, adoption %d: say each", e.Field, e.Default, e.Valid, e.Adopt)
		}
		if (e.Adopt == Named) != (e.Note != "") {
			t.Errorf("%s: a Named setting (only) says why in Note", e.Field)
		}
		if e.Adopt == Fixed && !ty.Field(i).Type.Comparable() {
			t.Errorf("%s: Fixed, but NotApplied cannot compare %v", e.Field, ty.Field(i).Type)
		}
	}
}

// TestFlagsParseAndFormat: a setting with a flag of its own parses its
// example, to a value that is not the zero one, and formats it back; one
// without has neither; no two settings share a flag unless marked.
func TestFlagsParseAndFormat(t *testing.T) {
	owner := map[Key]ID{}
	for i := range Table {
		e := &Table[i]
		for _, k := range e.Keys {
			if k.Var != XRayOptionsVar && k.Var != XRayFDROptionsVar || k.Name == "" || k.Example == "" {
				t.Errorf("%s: key %+v", e.Field, k)
			}
			id := Key{Var: k.Var, Name: k.Name}
			if prev, ok := owner[id]; ok && !(k.Shared && Table[prev].Keys[0].Shared) {
				t.Errorf("%s and %s share %s", Table[prev].Field, e.Field, k.Name)
			}
			owner[id] = e.ID
		}
		k := e.Flag()
		if (k.Name != "") != (e.parse != nil) || (e.parse != nil) != (e.format != nil) {
			t.Errorf("%s: flag %q, parse %v, format %v", e.Field, k.Name, e.parse != nil, e.format != nil)
			continue
		}
		if k.Name == "" {
			if want := e.Parse(&Values{}, "1"); want == "" {
				t.Errorf("%s: Parse accepted a value without a flag", e.Field)
			}
			continue
		}
		var v Values
		if want := e.Parse(&v, k.Example); want != "" {
			t.Errorf("%s=%s: wants %s", k.Name, k.Example, want)
		}
		if !v.IsSet(e.ID) {
			t.Errorf("%s=%s: the example sets nothing", k.Name, k.Example)
		}
		var back Values
		if s := e.Format(&v); e.Parse(&back, s) != "" || !reflect.DeepEqual(back, v) {
			t.Errorf("%s: %q formats as %q, which parses as %+v", e.Field, k.Example, s, back)
		}
		var untouched Values
		if want := e.Parse(&untouched, "\x00bad"); want == "" || !reflect.DeepEqual(untouched, Values{}) {
			t.Errorf("%s: a bad value: want %q, left %+v", e.Field, want, untouched)
		}
	}
}

// TestResolvedDefaultsAreValid: the zero Values resolves to a
// configuration Validate takes.
func TestResolvedDefaultsAreValid(t *testing.T) {
	v := Values{Dir: t.TempDir()}
	Resolve(&v, 0)
	if err := v.Validate(); err != nil {
		t.Fatal(err)
	}
	if v.FlushSignal != syscall.SIGUSR1 || v.FilePrefix != DefaultFilePrefix || v.OverheadBudget != DefaultOverheadBudget ||
		v.GoTraceBytes < minGoTraceBytes || v.DirMaxFiles != DefaultDirMaxFiles || v.Logf == nil || v.Program == "" {
		t.Errorf("resolved: %+v", v)
	}
	// "None" values and the environment's empty prefix.
	v = Values{FlushSignal: NoSignal, OverheadBudget: NoOverheadBudget, DirMaxFiles: -1, DirMaxBytes: -1, MinDuration: -1}
	Resolve(&v, Set(0).With(FilePrefix))
	if v.FlushSignal != nil || v.OverheadBudget != 0 || v.DirMaxFiles != 0 || v.DirMaxBytes != 0 || v.MinDuration != 0 || v.FilePrefix != "" {
		t.Errorf("resolved nones: %+v", v)
	}
}

// TestValidateRefusesEachCheckedSetting: every setting Validate checks
// has a value here that it refuses, naming the field.
func TestValidateRefusesEachCheckedSetting(t *testing.T) {
	bad := map[ID]func(v *Values){
		Version:        func(v *Values) { v.Version = 3 },
		BufferSize:     func(v *Values) { v.BufferSize = buffer.MinSize + 1 },
		BufferCount:    func(v *Values) { v.BufferCount = 1 },
		Mode:           func(v *Values) { v.Mode = 9 },
		FlushSignal:    func(v *Values) { v.FlushSignal = syscall.SIGPROF },
		Program:        func(v *Values) { v.Program = "a/b" },
		FilePrefix:     func(v *Values) { v.FilePrefix = "a\x00" },
		OverheadBudget: func(v *Values) { v.OverheadBudget = math.NaN() },
		GoTrace:        func(v *Values) { v.GoTrace, v.Mode = true, buffer.Fill },
	}
	dir := t.TempDir()
	for i := range Table {
		e := &Table[i]
		set, ok := bad[e.ID]
		if ok != e.Checked() {
			t.Errorf("%s: checked %v, but a bad value here: %v", e.Field, e.Checked(), ok)
			continue
		}
		if !ok {
			continue
		}
		v := Values{Dir: dir}
		Resolve(&v, 0)
		set(&v)
		err := v.Validate()
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), e.Field+" ") {
			t.Errorf("%s: Validate = %v", e.Field, err)
		}
	}
}

// TestFillFromAndAdopt: the environment fills only zero fields; Adopt
// copies the Live settings and no other; NotApplied names what o asked of
// the others.
func TestFillFromAndAdopt(t *testing.T) {
	env := Values{BufferSize: 8192, Version: 1, NoFinalFile: true}
	v := Values{BufferSize: 4096}
	took := v.FillFrom(&env, Set(0).With(BufferSize).With(Version).With(NoFinalFile))
	if v.BufferSize != 4096 || v.Version != 1 || !v.NoFinalFile || took != Set(0).With(Version).With(NoFinalFile) {
		t.Errorf("FillFrom: %+v took %b", v, took)
	}

	var run, c Values
	Resolve(&run, 0)
	c = run
	cv, rv := reflect.ValueOf(&c).Elem(), reflect.ValueOf(&run).Elem()
	for i := range Table {
		if f := cv.Field(i); f.Kind() != reflect.Func {
			changeValue(f)
		}
	}
	before := run
	Adopt(&run, &c)
	for i := range Table {
		e := &Table[i]
		if e.Adopt == Live && cv.Field(i).Kind() == reflect.Func {
			continue
		}
		got, was := rv.Field(i).Interface(), reflect.ValueOf(before).Field(i).Interface()
		if changed := !reflect.DeepEqual(got, was); changed != (e.Adopt == Live) {
			t.Errorf("%s (adoption %d): changed %v", e.Field, e.Adopt, changed)
		}
	}
	o := c
	kept := strings.Join(NotApplied(&o, &c, &run), ", ")
	for i := range Table {
		e := &Table[i]
		if named := strings.Contains(kept, e.Field+" "); named != (e.Adopt != Live) {
			t.Errorf("%s (adoption %d): named %v in %q", e.Field, e.Adopt, named, kept)
		}
	}
}

// changeValue sets f to a value other than its own.
func changeValue(f reflect.Value) {
	switch f.Kind() {
	case reflect.String:
		f.SetString(f.String() + "x")
	case reflect.Int, reflect.Int64:
		f.SetInt(f.Int() + 1)
	case reflect.Uint8, reflect.Uint64:
		f.SetUint(f.Uint() + 1)
	case reflect.Bool:
		f.SetBool(!f.Bool())
	case reflect.Float64:
		f.SetFloat(f.Float() + 1)
	case reflect.Interface:
		f.Set(reflect.ValueOf(syscall.SIGWINCH))
	default:
		panic("changeValue: " + f.Kind().String())
	}
}

// TestNameLimitStated: the limit on FilePrefix+Program that Validate
// enforces is the one the schema states.
func TestNameLimitStated(t *testing.T) {
	for _, id := range []ID{Program, FilePrefix} {
		if want := "at most " + strconv.Itoa(maxNameLen) + " bytes"; !strings.Contains(Table[id].Valid, want) {
			t.Errorf("%s: Valid %q does not say %q", Table[id].Field, Table[id].Valid, want)
		}
	}
}
