// Package bench holds the per-call overhead benchmarks: goxray against the
// hardware floor (two reads of the clock the tracer uses on this CPU, the
// cheapest correctly ordered timestamp it advertises, and two 8-byte
// stores: the least any timestamping tracer can do per call) and, as they are added, the peers.
//
// Run them with `make bench`, or
//
//	go test -C bench -run '^$' -bench . -benchmem -count 10 . | tee new.txt
//	benchstat new.txt
//
// Compare rows only within one run: the machine is shared and noisy.
package bench
