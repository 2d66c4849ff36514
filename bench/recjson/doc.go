// Package recjson holds the recursive benchmark's validator twice: plain
// and as goxray's instrumentation rewrites it (auto), and the test that
// keeps the two in step.
package recjson
