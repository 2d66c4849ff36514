package xray

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/goxray/xray/internal/settings"
	"github.com/goxray/xray/internal/xrayflags"
)

// The schema (internal/settings) is where each setting lives once; these
// tests fail when a setting is missing from one of the places that derive
// from it. Options itself converts to settings.Values, so an Options field
// without a row does not compile; TestAdoptAppliesOrNamesEveryOption and
// TestStartRefusesBadOptions cover adoption and validation row by row.

// TestSchemaIsOptions: the rows are Options' fields, in order.
func TestSchemaIsOptions(t *testing.T) {
	ty := reflect.TypeFor[Options]()
	if ty.NumField() != len(settings.Table) {
		t.Fatalf("Options has %d fields, the schema %d rows", ty.NumField(), len(settings.Table))
	}
	for i := range settings.Table {
		if f := ty.Field(i); !f.IsExported() || f.Name != settings.Table[i].Field {
			t.Errorf("Options field %d is %s, the schema's row %s", i, f.Name, settings.Table[i].Field)
		}
	}
}

// TestSchemaFlagsReachOptions: every flag the schema names is one the
// parser knows, and setting it in the environment changes the setting
// Start uses; every flag the parser knows is a setting's, or one of
// compiler-rt's that configures nothing here.
func TestSchemaFlagsReachOptions(t *testing.T) {
	defaults, err := Options{IgnoreEnv: true}.config()
	if err != nil {
		t.Fatal(err)
	}
	dv := reflect.ValueOf(defaults)
	keys := map[[2]string]bool{}
	for i := range settings.Table {
		e := &settings.Table[i]
		for _, k := range e.Keys {
			keys[[2]string{k.Var, k.Name}] = true
			flag := k.Name + "=" + k.Example
			xo, fo := flag, ""
			if k.Var == settings.XRayFDROptionsVar {
				xo, fo = "", flag
			}
			withEnv(t, xo, fo)
			c, err := Options{}.config()
			if err != nil {
				t.Fatal(err)
			}
			got, def := reflect.ValueOf(c).Field(int(e.ID)).Interface(), dv.Field(int(e.ID)).Interface()
			if reflect.DeepEqual(got, def) {
				t.Errorf("%s=%s leaves %s at its default %v", k.Name, k.Example, e.Field, def)
			}
		}
	}
	notSettings := map[string]bool{
		"patch_premain": true, "xray_mode": true, "verbosity": true, "xray_page_size_override": true,
		"xray_fdr_log": true, "xray_fdr_log_grace_period_ms": true, "xray_fdr_log_grace_period_us": true,
		"xray_naive_log": true, "xray_naive_log_func_duration_threshold_us": true,
		"xray_naive_log_max_stack_depth": true, "xray_naive_log_thread_buffer_size": true,
		"grace_period_ms": true,
	}
	for _, v := range []string{settings.XRayOptionsVar, settings.XRayFDROptionsVar} {
		for _, name := range xrayflags.FlagNames(v) {
			if !keys[[2]string{v, name}] && !notSettings[name] {
				t.Errorf("%s flag %s is no setting's key in the schema", v, name)
			}
		}
	}
}

// TestSchemaStatsNames: each Stats path the schema gives reports the
// setting in effect, and each Statistics field named like an Options
// field is such a path.
func TestSchemaStatsNames(t *testing.T) {
	o := Options{IgnoreEnv: true, NoFinalFile: true, BufferSize: 128 << 10, BufferCount: 71,
		OverheadBudget: 7, GoTrace: true, GoTraceBytes: 5 << 20}
	start(t, o)
	o.Dir, o.Logf, o.FlushSignal = "x", quiet, NoSignal // as start gave them
	c, err := o.config()
	if err != nil {
		t.Fatal(err)
	}
	st := reflect.ValueOf(Stats())
	named := map[string]bool{}
	asked := settings.Values(o)
	for i := range settings.Table {
		e := &settings.Table[i]
		if e.Stats == "" {
			continue
		}
		if !asked.IsSet(e.ID) {
			t.Errorf("%s: set it in this test to a value other than its default", e.Field)
		}
		path := strings.Split(e.Stats, ".")
		named[path[0]] = true
		f := st
		for _, p := range path {
			if f = f.FieldByName(p); !f.IsValid() {
				t.Fatalf("%s: no Statistics.%s", e.Field, e.Stats)
			}
		}
		want := reflect.ValueOf(c).Field(int(e.ID))
		if f.Type() != want.Type() || f.Interface() != want.Interface() {
			t.Errorf("Statistics.%s = %v (%v), want %s %v (%v)", e.Stats, f, f.Type(), e.Field, want, want.Type())
		}
	}
	for i := range st.NumField() {
		name := st.Type().Field(i).Name
		if _, ok := reflect.TypeFor[Options]().FieldByName(name); ok && !named[name] {
			t.Errorf("Statistics.%s reports Options.%s, but the schema names no Stats for it", name, name)
		}
	}
}

// TestSchemaInTheDocs: Start's documentation sorts the options as the
// schema's adoption does, and env.go's names every flag of the schema.
func TestSchemaInTheDocs(t *testing.T) {
	src, err := os.ReadFile("xray.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(src)
	doc = doc[strings.Index(doc, "// Start begins tracing."):strings.Index(doc, "func Start(")]
	doc = strings.Join(strings.Fields(strings.ReplaceAll(doc, "//", "")), " ")
	i, j := strings.Index(doc, "can change —"), strings.Index(doc, "which the running session did not")
	if i < 0 || j < i {
		t.Fatalf("Start's documentation no longer says what adoption applies: %q", doc)
	}
	a := i + strings.Index(doc[i:], ". ")
	applied, kept := doc[i:a], doc[a:j]
	for k := range settings.Table {
		e := &settings.Table[k]
		inApplied, inKept := strings.Contains(applied, " "+e.Field), strings.Contains(kept, " "+e.Field)
		if inApplied != (e.Adopt == settings.Live) || inKept == (e.Adopt == settings.Live) {
			t.Errorf("Start's documentation lists %s as applied %v, kept %v; the schema says %v", e.Field, inApplied, inKept, e.Adopt)
		}
	}
	src, err = os.ReadFile("env.go")
	if err != nil {
		t.Fatal(err)
	}
	for k := range settings.Table {
		for _, key := range settings.Table[k].Keys {
			if !key.Deprecated && !strings.Contains(string(src), "//\t"+key.Name) && !strings.Contains(string(src), ", "+key.Name) {
				t.Errorf("env.go's documentation does not map %s", key.Name)
			}
		}
	}
}
