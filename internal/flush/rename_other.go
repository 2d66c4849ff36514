//go:build !linux

package flush

// renameNoReplace renames old to new unless new exists (fs.ErrExist).
func renameNoReplace(old, new string) error { return renameByLink(old, new) }
