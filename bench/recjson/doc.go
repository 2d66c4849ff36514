// Package recjson holds the recursive benchmark's validator: plain, as
// goxray's instrumentation rewrites it by default (auto) and with
// -xray.leaves=skip-loops (skiploops), a copy of plain under another name
// (plaincopy, the A/A control), and the tests that keep them in step.
package recjson
