// Package xrayauto holds the hooks that `goxray build`, `goxray test` and
// `goxray run` insert into rewritten copies of a program's sources (see
// internal/instrument): the per-file id tables and their gates
// (RegisterTable, Gate: the one word a call tests to know whether it is
// traced), the words that tell where each function's code starts, from
// which the map takes its name (Code, RegisterCode, Codes, Lit, LitCopy,
// Here), what the build left untraced (RegisterUntracedSet), the functions
// recorded only through their callers' traced copies, which the overhead
// governor sheds with those callers (RegisterDispatch), its records
// (Enter, Exit), and the final flush before main returns or the program
// exits (AutoStop, AutoExit, AutoStop*). They are exported only because
// that code lives in the user's packages; programs call package xray, not
// this one.
//
// Importing it imports xray, whose initialisation reads XRAY_OPTIONS, so a
// program built with `goxray build` can be traced by the environment alone.
package xrayauto
