package user

import "example.com/dispatchtestfunc"

func U() int { return dispatchtestfunc.Walk([]int{1}) }
