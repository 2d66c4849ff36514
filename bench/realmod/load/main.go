// Command load sends a bounded number of GET requests to a loopback HTTP
// server over keep-alive connections and prints the rate: the load
// generator of scripts/bench-realmod.sh. It refuses any address that is
// not on 127.0.0.1, and stops at -n requests or after -d, whichever comes
// first.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	addr := flag.String("addr", "", "server address, 127.0.0.1:PORT")
	n := flag.Int("n", 10000, "requests to send (at most)")
	c := flag.Int("c", 4, "concurrent connections")
	d := flag.Duration("d", 30*time.Second, "time limit")
	flag.Parse()
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || host != "127.0.0.1" || *n < 1 || *c < 1 {
		fmt.Fprintln(os.Stderr, "load: -addr must be 127.0.0.1:PORT, -n and -c positive")
		os.Exit(2)
	}
	client := &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: *c, DisableCompression: true},
		Timeout:   10 * time.Second,
	}
	var sent, done, failed atomic.Int64
	deadline := time.Now().Add(*d)
	start := time.Now()
	var wg sync.WaitGroup
	for range *c {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				i := sent.Add(1)
				if i > int64(*n) {
					return
				}
				resp, err := client.Get("http://" + *addr + "/users/" + strconv.FormatInt(i%1000, 10) + "?fields=name,email")
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.Add(1)
					continue
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	fmt.Printf("REQS %d FAILED %d SECONDS %.3f RPS %.1f\n", done.Load(), failed.Load(), el.Seconds(), float64(done.Load())/el.Seconds())
	if failed.Load() > 0 {
		os.Exit(1)
	}
}
