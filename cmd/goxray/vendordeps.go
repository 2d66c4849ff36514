//go:build goxray_vendor

package main

// `go mod vendor` copies the packages that the main module and its tools
// import under any build tag (all but "ignore"). The instrumented build of a
// vendored module imports github.com/goxray/xray/xrayauto, which this command does
// not link (its init would start tracing the tool itself under
// XRAY_OPTIONS); naming it under a tag nobody sets puts it and its
// dependencies into the user's vendor directory all the same.
import _ "github.com/goxray/xray/xrayauto"
