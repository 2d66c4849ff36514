package flush

import "github.com/goxray/xray/fdr"

// lineage is what the goroutine's lineage event says (written only when
// the parent is known).
func (gp *goPlan) lineage() fdr.Lineage {
	return fdr.Lineage{Parent: gp.parent, Spawn: gp.spawn}
}

// resolveSpawns sets the spawn function id of every goroutine whose
// lineage event will be written, asking spawnID once per distinct PC: a
// file holds thousands of goroutines started by a handful of go
// statements, and resolving a PC means a symbol table search and a
// registry lookup under its lock.
func resolveSpawns(plans []goPlan, spawnID func(pc uint64) uint32) {
	if spawnID == nil {
		return
	}
	var last, lastID uint64 // goroutines of one go statement often come in a row
	var seen map[uint64]uint32
	for i := range plans {
		gp := &plans[i]
		if gp.parent == 0 || gp.gopc == 0 {
			continue
		}
		if gp.gopc == last {
			gp.spawn = uint32(lastID)
			continue
		}
		id, ok := seen[gp.gopc]
		if !ok {
			id = spawnID(gp.gopc)
			if id > fdr.MaxFuncID {
				id = 0 // not an id a record can carry
			}
			if seen == nil {
				seen = map[uint64]uint32{}
			}
			seen[gp.gopc] = id
		}
		gp.spawn, last, lastID = id, gp.gopc, uint64(id)
	}
}
