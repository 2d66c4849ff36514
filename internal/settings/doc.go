// Package settings is goxray's configuration schema: every setting once,
// in Table, with the xray.Options field that carries it, the
// XRAY_OPTIONS / XRAY_FDR_OPTIONS flags that set it, its default, what
// Validate accepts, what a running session does when a later xray.Start
// asks for it (Adoption), and the xray.Statistics field that reports it.
//
// Everything else derives from the table. Values has one field per row,
// named as xray.Options names it, and xray.Options converts to it, so the
// compiler keeps the public struct and the schema in step; the engine's
// Config is Values, so a setting has one name from Options to the
// recorder. Resolve fills defaults and Validate checks, row by row;
// internal/xrayflags builds its XRAY_FDR_OPTIONS flags from the rows'
// keys and parsers (Entry.Parse, Entry.Format); FillFrom layers the
// environment under Options; Adopt and NotApplied are what adoption
// does with each row. The package's tests, and package xray's, fail when
// a setting is missing from any of them.
//
// The package sits low: it imports only internal/buffer (the queue's
// limits and Mode) and internal/logline (the default Logf), never the
// engine or the parsers above it. The flush-signal policy (SignalProblem)
// is here because it is FlushSignal's validation, shared by Start and
// flush_signal.
package settings
