package registry

import "testing"

func TestRegisterAllAssignsInOrderAndKeepsExisting(t *testing.T) {
	pre := Register("batch.Existing")
	fs := []Func{
		{Name: "batch.A", File: "/src/a.go", Line: 3},
		{Name: "batch.Existing", File: "/src/a.go", Line: 9},
		{Name: ""},
		{Name: "batch.B", File: "/src/a.go", Line: 12},
	}
	ids := make([]uint32, len(fs))
	RegisterAll(fs, ids)
	if ids[1] != pre {
		t.Errorf("existing name got id %d, want %d", ids[1], pre)
	}
	if ids[2] != 0 {
		t.Errorf("empty name got id %d", ids[2])
	}
	if ids[0] == 0 || ids[3] != ids[0]+1 {
		t.Errorf("new names got ids %d and %d, want consecutive", ids[0], ids[3])
	}
	for _, i := range []int{0, 1, 3} {
		f, ok := Lookup(ids[i])
		if !ok || f.Name != fs[i].Name || f.File != fs[i].File || f.Line != fs[i].Line {
			t.Errorf("Lookup(%d) = %+v, %v; want %+v", ids[i], f, ok, fs[i])
		}
	}
	again := make([]uint32, len(fs))
	RegisterAll(fs, again)
	if again[0] != ids[0] || again[3] != ids[3] {
		t.Errorf("second registration changed ids: %v then %v", ids, again)
	}
}
