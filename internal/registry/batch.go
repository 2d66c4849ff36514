package registry

// RegisterAll registers fs in order under one acquisition of the lock and
// stores each one's id in ids[i] (len(ids) must be at least len(fs)). It is
// what automatically instrumented packages call once per source file at
// initialization: one call for the whole table instead of one per
// function. Names already registered keep their id (and gain the File and
// Line given here if they had none), exactly as Register and FuncOf do;
// entries with an empty name get 0.
func RegisterAll(fs []Func, ids []uint32) {
	_ = ids[:len(fs)]
	mu.Lock()
	defer mu.Unlock()
	resolve()
	for i, f := range fs {
		if f.Name == "" {
			ids[i] = 0
			continue
		}
		f.ID = 0
		ids[i] = add(f)
	}
}
