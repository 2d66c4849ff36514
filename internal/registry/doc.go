// Package registry gives function names their ids, in two ranges that
// never meet:
//
//   - hand-picked ids, 1 ≤ id < FirstRegistered, chosen by the program
//     (const idHandle xray.ID = 1) and optionally named with Name;
//   - registered ids, FirstRegistered ≤ id ≤ MaxID, handed out in order of
//     first registration by Register and FuncOf (and by the automatic
//     instrumentation, which registers every function at package init),
//     stable for the life of the process.
//
// The ids are what the runtime's records carry and what the
// instrumentation map lists, so llvm-xray can turn them back into names.
// llvm-xray numbers map entries by position, so the map holds an entry for
// every id up to the largest one in use: the hand-picked range is kept
// small (1023 ids, about 60 KiB of placeholders in each map once a
// registered id is used) rather than, say, 2^24, which would make every
// map half a gigabyte.
//
// The automatic instrumentation registers each function under the name
// its source predicts and hands over a word where the entry of its code
// appears (SetCode); from then on the id's name is the one the running
// binary gives that code (runtime.FuncForPC), and the predicted name
// stays its key (KeyOf, IDOfKey), by which generated code refers to it.
// See code.go.
//
// Register, FuncOf and Name may be called from any goroutine; they take a
// lock and are not meant for the hot path (call them once, into a
// package-level variable). Funcs returns a consistent copy of the table.
package registry
