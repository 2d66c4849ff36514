// Package instrmap writes and reads the instrumentation-map side file that
// gives goxray traces their function names: the file a user passes to
// llvm-xray as -instr_map (account, stack, graph, convert -symbolize,
// extract). Write makes it; Map (ReadMap, ParseMap) reads it, or the
// xray_instr_map section of a binary built with clang -fxray-instrument,
// numbering ids the way llvm-xray numbers them, for goxray's own views.
//
// # Contract
//
// Write(w, funcs) writes one ELF object for funcs, sorted by id. Entry k
// of the map is function id k, because llvm-xray numbers map entries by
// position (1-based) and ignores any id stored elsewhere; ids missing from
// funcs (gaps) and funcs without a name get the placeholder name "#<id>",
// the same text llvm-xray prints for an id past the end of the map. With
// that file, llvm-xray 14 and 19 print the Go name of every id in every
// tool, and account's location column shows "file.go:line:0" for
// functions with a File (`<invalid>:0:0` without one; `(unknown)` for ids
// past the end of the map). A map with no functions is valid: the tools
// then print "#<id>" everywhere. Write is deterministic (same input, same
// bytes), uses only the standard library, and does not depend on the host:
// the object is always ELF64 little-endian x86-64, which llvm-xray reads
// on any machine and for a trace from any architecture.
//
// # The file
//
// An ET_REL object with no code and no relocations:
//
//   - .text: SHT_NOBITS, SHF_ALLOC|SHF_EXECINSTR, 16 bytes per id. Id k
//     "lives" at address 16·k; nothing sits at address 0, where llvm-xray's
//     id counting goes wrong.
//   - xray_instr_map: one 32-byte sled per id in id order: sled address =
//     function address = 16·k, kind 0 (function-enter), always-instrument 1,
//     version 0 (absolute addresses, so no relocations are needed). Kinds
//     ≥ 5 are never written: llvm-xray rejects a whole map containing one.
//   - .symtab/.strtab: one STB_GLOBAL STT_FUNC symbol of size 16 per id,
//     defined in .text (llvm-symbolizer ignores absolute symbols). This is
//     where llvm-xray's names come from.
//   - .debug_abbrev, .debug_info, .debug_line (DWARF 4): one compile unit
//     covering all of .text with DW_AT_stmt_list pointing at a line table
//     that has one row per function with a File. Both the compile unit and
//     its address range are needed: measured with llvm-xray 14 and 19, a
//     .debug_line alone, or a unit without DW_AT_low_pc/DW_AT_high_pc,
//     gives `<invalid>:0:0`, because LLVM's symbolizer reaches line tables
//     only through the unit whose range contains the address. The unit
//     has no DW_TAG_subprogram children: llvm-xray takes function names
//     from the symbol table anyway. A function without a File ends the
//     line-table sequence, so its address has no row and it does not
//     inherit its neighbour's position.
//
// # Names
//
// Names are written as given except for bytes that break llvm-xray's
// output, which llvm-xray prints without escaping: control bytes and bytes
// that are not UTF-8 become '?', a double quote becomes a single quote and
// a backslash becomes '/' (the trace_event JSON and the graph DOT output
// would be invalid otherwise), and ';' becomes ':' (the flame-graph frame
// separator). Each replacement is one byte for one byte; file paths get
// the same treatment. Go's own function names (runtime.FuncForPC:
// "main.(*T).M-fm", "pkg/path.F[...]", "main.main.func1.2", unicode
// identifiers) never contain any of these and pass through unchanged, and
// so do spaces. `graph` cuts labels longer than 40 bytes to 40 bytes and
// "..."; the other tools print names whole.
//
// llvm-xray demangles names (account, stack and graph always; convert
// unless -no-demangle). Write does not protect names from that: a name
// that is a valid Itanium ("_ZN3foo3barEv" → "foo::bar()"), Rust v0
// ("_RNv…") or Microsoft ("?foo@@YAXXZ" → "foo(void)") mangling is shown
// demangled, measured with both 14 and 19; anything else, including
// "_Zfoo", is shown as is. A Go function name always starts with its
// package path, so in practice only hand-registered names can be affected,
// and a user who registers a C++ mangled name most likely wants it
// demangled.
package instrmap
