package gatecaller

import __xray "github.com/goxray/xray/xrayauto"

var __xray_ids_literal_on [1]__xray.Gate
var __xray_ids_literal_code [1]__xray.Code
var __xray_ids_literal = __xray_ids_literal_init()

// Adder makes a literal as goxray build instruments it: where it is made,
// the entry of its code is recorded (one load and a branch once recorded),
// and so is its traced copy's where the literal makes it.
func Adder(n int) func(int) int {
	return __xray.Lit(&__xray_ids_literal_code[0], func(x int) int {
		if __xray_ids_literal_on[0].On() {
			return __xray.LitCopy(&__xray_ids_literal_code[0], func(x int) int {
				__xray.Enter(__xray_ids_literal[0])
				defer __xray.Exit(__xray_ids_literal[0])
				return x + n
			})(x)
		}
		return x + n
	})
}

func __xray_ids_literal_init() (ids [1]__xray.ID) {
	__xray.RegisterTable(ids[:], __xray_ids_literal_on[:], "literal.go", "gatecaller.Adder.func1\t13\n")
	__xray.RegisterCode(ids[:], __xray_ids_literal_code[:])
	return
}
