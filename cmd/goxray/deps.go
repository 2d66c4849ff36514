package main

// goxray's runtime needs golang.org/x/sys. Importing a package that pulls
// it in makes `go get -tool github.com/goxray/xray/cmd/goxray` (and `go mod
// tidy` with the tool directive) record its checksums in the user's
// go.sum, which the instrumented build needs: that build must not update
// the user's go.sum itself. internal/buffer has no init-time side effects.
import _ "github.com/goxray/xray/internal/buffer"
