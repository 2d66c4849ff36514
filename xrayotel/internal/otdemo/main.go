// Command otdemo is the service of `make demo-otel`: it serves a few
// requests, one of them slow, under goxray and an OpenTelemetry tracer
// provider with xrayotel's processor exporting to Jaeger, then reads the
// slow request back from Jaeger's API and prints it as stored there, and
// writes goxray's trace file for `go tool goxray top -trace`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/goxray/xray"
	"github.com/goxray/xray/xrayotel"
	"github.com/goxray/xray/xrayotel/internal/jaegerapi"
)

var idHandle, idParse, idQuery, idFetch, idRender xray.ID

func init() {
	idHandle, idParse, idQuery = xray.FuncOf(handle), xray.FuncOf(parse), xray.FuncOf(query)
	idFetch, idRender = xray.FuncOf(fetch), xray.FuncOf(render)
}

func parse() { xray.Enter(idParse); defer xray.Exit(idParse); time.Sleep(time.Millisecond) }

func fetch(d time.Duration) {
	xray.Enter(idFetch)
	defer xray.Exit(idFetch)
	time.Sleep(d)
}

// query fans out to two shards, the slow request's second one slow.
func query(slow bool) {
	xray.Enter(idQuery)
	defer xray.Exit(idQuery)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := 2 * time.Millisecond
			if slow && i == 1 {
				d = 40 * time.Millisecond
			}
			fetch(d)
		}()
	}
	wg.Wait()
}

func render() { xray.Enter(idRender); defer xray.Exit(idRender); time.Sleep(time.Millisecond) }

func handle(slow bool) {
	xray.Enter(idHandle)
	defer xray.Exit(idHandle)
	parse()
	query(slow)
	render()
}

func main() {
	otlp := flag.String("otlp", "127.0.0.1:4318", "Jaeger's OTLP/HTTP endpoint")
	api := flag.String("query", "127.0.0.1:16686", "Jaeger's query endpoint")
	dir := flag.String("dir", os.TempDir(), "where goxray writes its trace file")
	flag.Parse()
	if err := run(*otlp, *api, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "otdemo:", err)
		os.Exit(1)
	}
}

func run(otlp, api, dir string) error {
	if err := xray.Start(xray.Options{Dir: dir, Program: "otdemo", FlushSignal: xray.NoSignal, NoFinalFile: true, IgnoreEnv: true}); err != nil {
		return err
	}
	defer xray.Stop()
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(otlp), otlptracehttp.WithInsecure())
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "otdemo"))),
		sdktrace.WithBatcher(exp),
		sdktrace.WithSpanProcessor(xrayotel.NewSpanProcessor(exp, xrayotel.Options{Threshold: 30 * time.Millisecond})),
	)
	tr := tp.Tracer("otdemo")
	var slowID string
	for i := range 10 {
		slow := i == 6
		_, span := tr.Start(ctx, "GET /checkout")
		handle(slow)
		span.End()
		if slow {
			slowID = span.SpanContext().TraceID().String()
		}
	}
	if err := tp.ForceFlush(ctx); err != nil {
		return err
	}
	if err := tp.Shutdown(ctx); err != nil {
		return err
	}
	path, err := xray.Flush()
	if err != nil {
		return err
	}
	fmt.Printf("10 requests of GET /checkout, one slow: trace %s\n", slowID)
	fmt.Printf("as Jaeger stores it (http://%s/api/traces/%s):\n", api, slowID)
	if err := printTrace(api, slowID); err != nil {
		return err
	}
	fmt.Printf("goxray trace file: %s\n", path)
	return nil
}

// printTrace fetches the trace from Jaeger (waiting until the summary span
// is stored) and prints its span tree: offset from the request's start,
// duration, name.
func printTrace(api, id string) error {
	spans, err := jaegerapi.Fetch(api, id, 30*time.Second, func(spans []jaegerapi.Span) bool {
		return slices.ContainsFunc(spans, func(s jaegerapi.Span) bool { return s.OperationName == xrayotel.SummaryName })
	})
	if err != nil {
		return err
	}
	kids := map[string][]jaegerapi.Span{}
	var root jaegerapi.Span
	for _, s := range spans {
		parent := s.Parent()
		if parent == "" {
			root = s
			continue
		}
		kids[parent] = append(kids[parent], s)
	}
	var walk func(s jaegerapi.Span, depth int)
	walk = func(s jaegerapi.Span, depth int) {
		extra := ""
		for _, t := range s.Tags {
			if strings.HasPrefix(t.Key, "goxray.") && s.OperationName == xrayotel.SummaryName {
				switch t.Key {
				case "goxray.calls", "goxray.dropped", "goxray.goroutines", "goxray.unmatched", "goxray.window_truncated":
					extra += fmt.Sprintf(" %s=%v", strings.TrimPrefix(t.Key, "goxray."), t.Value)
				}
			} else if t.Key == "goxray.goroutine" {
				extra = fmt.Sprintf("  [goroutine %v]", t.Value)
			}
		}
		fmt.Printf("  %+8.3f ms %8.3f ms  %s%s%s\n", float64(s.StartTime-root.StartTime)/1000, float64(s.Duration)/1000,
			strings.Repeat("  ", depth), s.OperationName, extra)
		ks := kids[s.SpanID]
		sort.Slice(ks, func(i, j int) bool {
			if ks[i].StartTime != ks[j].StartTime {
				return ks[i].StartTime < ks[j].StartTime
			}
			return ks[i].OperationName < ks[j].OperationName
		})
		for _, k := range ks {
			walk(k, depth+1)
		}
	}
	fmt.Printf("  %11s %11s  %s\n", "start", "duration", "span")
	walk(root, 0)
	return nil
}
