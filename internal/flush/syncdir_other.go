//go:build !unix

package flush

// syncDir: directories cannot be opened for syncing here; the rename is
// what the file system keeps of the name.
func syncDir(string) error { return nil }
