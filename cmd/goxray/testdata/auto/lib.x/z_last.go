package lib

func late() int { Probe(); return 1 }
