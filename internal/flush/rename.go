package flush

import "os"

// renameByLink gives the file its new name with a hard link, which fails if
// the name is taken, then removes the old name.
func renameByLink(old, new string) error {
	if err := os.Link(old, new); err != nil {
		return err
	}
	return os.Remove(old)
}
