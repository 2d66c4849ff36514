package lib

func late() int { Probe(); return 1 }

var Glob2 = func() int { Probe(); return 1 }()
