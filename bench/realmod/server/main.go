//go:build ignore

// The server of scripts/bench-realmod.sh: Echo (github.com/labstack/echo/v4,
// pinned by the script) serving a small JSON API on 127.0.0.1, built in a
// module of its own. It prints "LISTEN addr" once it accepts connections
// and, after SIGTERM (a graceful shutdown), "SERVED n", the requests its
// handler answered; main then returns, which writes the final trace when
// it is traced.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

type user struct {
	ID     string   `json:"id"`
	Name   string   `json:"name"`
	Email  string   `json:"email"`
	Fields []string `json:"fields"`
}

func main() {
	var served atomic.Int64
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Use(middleware.Recover())
	e.GET("/users/:id", func(c echo.Context) error {
		served.Add(1)
		id := c.Param("id")
		return c.JSON(http.StatusOK, user{ID: id, Name: "user " + id, Email: id + "@example.com", Fields: strings.Split(c.QueryParam("fields"), ",")})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	e.Listener = ln
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	go func() {
		if err := e.Start(""); err != nil && err != http.ErrServerClosed {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}()
	fmt.Printf("LISTEN %s\n", ln.Addr())
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Shutdown(sctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	fmt.Printf("SERVED %d\n", served.Load())
}
