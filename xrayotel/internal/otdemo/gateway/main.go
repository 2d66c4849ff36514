// Command gateway is the front of the three services of `make demo-otel`:
// GET /checkout?user=U[&slow=1] fetches the user's profile from the api
// over HTTP (otelhttp's client span) and renders the page. The response
// names its trace in the X-Trace-Id header.
package main

import (
	"context"
	"flag"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/goxray/xray/xrayotel/internal/otdemo/svc"
)

type gateway struct {
	api    string
	client *http.Client
}

// checkout serves GET /checkout.
func (g *gateway) checkout(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Trace-Id", trace.SpanContextFromContext(r.Context()).TraceID().String())
	q := r.URL.Query()
	prof, err := g.fetchProfile(r.Context(), q.Get("user"), q.Get("slow") == "1")
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "text/html")
	io.WriteString(w, render(prof))
}

// fetchProfile asks the api for the user's profile, and waits for it.
//
//xray:always
func (g *gateway) fetchProfile(ctx context.Context, user string, slow bool) (string, error) {
	u := g.api + "/profile/" + url.PathEscape(user)
	if slow {
		u += "?slow=1"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := g.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("api: %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	return string(b), nil
}

// render makes the page.
//
//xray:always
func render(profile string) string {
	var b strings.Builder
	b.WriteString("<html><body><h1>Checkout</h1><pre>")
	b.WriteString(html.EscapeString(profile))
	b.WriteString("</pre></body></html>\n")
	return b.String()
}

func main() {
	f := svc.Define()
	api := flag.String("api", "", "the api's address")
	flag.Parse()
	s, err := svc.Start("gateway", f)
	if err != nil {
		svc.Fatal("gateway", err)
	}
	g := &gateway{api: "http://" + *api, client: &http.Client{Transport: otelhttp.NewTransport(http.DefaultTransport)}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /checkout", g.checkout)
	ln, err := svc.Listen()
	if err != nil {
		svc.Fatal("gateway", err)
	}
	srv := &http.Server{Handler: otelhttp.NewHandler(mux, "GET /checkout")}
	go srv.Serve(ln)
	s.Wait()
	srv.Close()
}
