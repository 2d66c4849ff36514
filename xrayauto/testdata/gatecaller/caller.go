// Package gatecaller is a function as goxray build instruments it, for
// TestGateTestIsInlined: the gate test must compile to a load and a
// branch in the instrumented package, not to a call.
package gatecaller

import __xray "github.com/goxray/xray/xrayauto"

var __xray_ids_caller_on [1]__xray.Gate
var __xray_ids_caller = __xray_ids_caller_init()

func Twice(x int) int {
	if __xray_ids_caller_on[0].On() {
		return __xray_Twice(x)
	}
	return 2 * x
}

func __xray_Twice(x int) int {
	__xray.Enter(__xray_ids_caller[0])
	defer __xray.Exit(__xray_ids_caller[0])
	return 2 * x
}

func __xray_ids_caller_init() (ids [1]__xray.ID) {
	__xray.RegisterTable(ids[:], __xray_ids_caller_on[:], "caller.go", "gatecaller.Twice\t11\n")
	return
}
