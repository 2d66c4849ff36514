package settings

import (
	"fmt"
	"reflect"
)

// field is setting id's field of v. Table's order is Values' (init
// checks it), so the index is the id.
func field(v *Values, id ID) reflect.Value { return reflect.ValueOf(v).Elem().Field(int(id)) }

func init() {
	ty := reflect.TypeFor[Values]()
	if ty.NumField() != int(NumSettings) {
		panic(fmt.Sprintf("settings: Values has %d fields, Table %d rows", ty.NumField(), NumSettings))
	}
	for id := range Table {
		if name := ty.Field(id).Name; Table[id].Field != name {
			panic(fmt.Sprintf("settings: Table row %d is %q, Values' field %q", id, Table[id].Field, name))
		}
	}
}

// IsSet reports whether v (as given, before Resolve) sets id: its field
// is not the zero value.
func (v *Values) IsSet(id ID) bool { return !field(v, id).IsZero() }

// FillFrom gives v's zero fields the values env sets (the settings in
// set), and returns the settings it took: built-in defaults <
// environment < v.
func (v *Values) FillFrom(env *Values, set Set) (took Set) {
	for id := range NumSettings {
		if set.Has(id) && !v.IsSet(id) {
			field(v, id).Set(field(env, id))
			took = took.With(id)
		}
	}
	return took
}

// Adopt gives run, a running session's resolved settings, the Live
// settings of c (resolved too). The caller does what a change needs
// beyond the value (new signal triggers, the governor's budget).
func Adopt(run *Values, c *Values) {
	for i := range Table {
		if e := &Table[i]; e.Adopt == Live {
			field(run, e.ID).Set(field(c, e.ID))
		}
	}
}

// NotApplied lists what a session running with run could not take of
// what o asked (c is o resolved): each Fixed setting o sets to a value
// other than run's, as "Field want (running with have)", and each Named
// setting o sets, as "Field (Note)".
func NotApplied(o, c, run *Values) []string {
	var kept []string
	for i := range Table {
		e := &Table[i]
		if !o.IsSet(e.ID) {
			continue
		}
		switch e.Adopt {
		case Fixed:
			if want, have := field(c, e.ID).Interface(), field(run, e.ID).Interface(); want != have {
				kept = append(kept, fmt.Sprintf("%s %v (running with %v)", e.Field, want, have))
			}
		case Named:
			kept = append(kept, fmt.Sprintf("%s (%s)", e.Field, e.Note))
		}
	}
	return kept
}
