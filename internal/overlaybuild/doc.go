// Package overlaybuild runs the go command's build, test or run on
// instrumented copies of the main module's sources: it asks go list which
// files the build compiles, rewrites them with internal/instrument, and
// hands the rewritten files to the go command through -overlay (with a
// temporary go.mod through -modfile when the module does not require
// goxray yet). It is what `goxray build`, `goxray test` and `goxray run`
// do; the user's tree is only read. A package named on the command line
// that none of this would instrument (another module's command or tests,
// unless -xray.pkgs names them, a standard package, or one goxray's
// runtime imports, whose instrumented copy would import itself) is
// refused before anything is built, naming the flag that would when
// there is one: such a build would succeed and trace nothing of what was
// asked, or fail on an import cycle.
//
// The go command hashes overlaid files like any source, so the build
// cache keys follow the rewritten content: a plain build afterwards
// reuses the plain objects, and a repeated instrumented build finds its
// own. The overlay files are content-addressed under the user cache
// directory, so repeated builds name the same paths.
package overlaybuild
