// Package recjson holds the recursive benchmark's validator twice: plain
// and as goxray's instrumentation rewrites it by default (auto) and with
// -xray.leaves=skip-loops (skiploops), and the test that keeps them in
// step.
package recjson
