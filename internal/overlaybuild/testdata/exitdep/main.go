// Command exitdep works, then ends the way its argument names, always
// through its logger package: a Fatal that calls the logger's exit
// function (os.Exit as a value, as logrus's and zap's loggers hold it),
// an os.Exit deferred in the logger, one in a generated file of the
// logger, or os.Exit called directly there.
package main

import (
	"fmt"
	"os"

	"example.com/exitdep/logger"
)

func main() {
	total := 0
	for i := range 100 {
		total += work(i)
	}
	fmt.Println("total", total)
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(os.Args[1])
	}()
	<-done
	fmt.Println("serve returned")
}

func work(i int) int {
	n := 0
	for j := range 100 {
		n += (i * j) % 7
	}
	return n
}

func serve(how string) {
	l := logger.New()
	switch how {
	case "value":
		l.Fatal("serve:", how)
	case "defer":
		logger.Flushed(3)
	case "generated":
		logger.Abort()
	case "call":
		logger.Exit(5)
	}
}
