package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/goxray/xray/xrayotel"
	"github.com/goxray/xray/xrayotel/internal/jaegerapi"
)

// printTree writes trace t as Jaeger stores it, as a tree: each span's
// start from the trace's start, its length, its service and name, and
// for function spans their time by state and the spans they waited on.
func printTree(w io.Writer, t jaegerapi.Trace) {
	byID := map[string]jaegerapi.Span{}
	kids := map[string][]jaegerapi.Span{}
	var roots []jaegerapi.Span
	for _, s := range t.Spans {
		byID[s.SpanID] = s
	}
	for _, s := range t.Spans {
		if _, ok := byID[s.Parent()]; ok {
			kids[s.Parent()] = append(kids[s.Parent()], s)
		} else {
			roots = append(roots, s)
		}
	}
	order := func(ss []jaegerapi.Span) {
		sort.Slice(ss, func(i, j int) bool {
			if ss[i].StartTime != ss[j].StartTime {
				return ss[i].StartTime < ss[j].StartTime
			}
			return ss[i].OperationName < ss[j].OperationName
		})
	}
	order(roots)
	if len(roots) == 0 {
		return
	}
	t0 := roots[0].StartTime
	fmt.Fprintf(w, "  %9s %9s  %-8s %s\n", "start ms", "length ms", "service", "span")
	var walk func(s jaegerapi.Span, depth int)
	walk = func(s jaegerapi.Span, depth int) {
		fmt.Fprintf(w, "  %+9.1f %9.1f  %-8s %s%s%s\n", float64(s.StartTime-t0)/1000, float64(s.Duration)/1000,
			t.Service(s), strings.Repeat("  ", depth), s.OperationName, notes(s, byID))
		ks := kids[s.SpanID]
		order(ks)
		for _, k := range ks {
			walk(k, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
}

// notes is what the tree says after a span's name.
func notes(s jaegerapi.Span, byID map[string]jaegerapi.Span) string {
	var b strings.Builder
	if k, ok := s.Tag("span.kind").(string); ok && k != "internal" {
		fmt.Fprintf(&b, " [%s]", k)
	}
	if s.OperationName == xrayotel.SummaryName {
		for _, k := range []string{"goxray.calls", "goxray.held", "goxray.reparented"} {
			if v := s.Tag(k); v != nil {
				fmt.Fprintf(&b, " %s=%v", strings.TrimPrefix(k, "goxray."), v)
			}
		}
		return b.String()
	}
	var split []string
	for _, k := range []string{"running", "runnable", "syscall", "blocked"} {
		if v, ok := s.Tag("goxray." + k + "_ns").(float64); ok && v >= 50e3 {
			split = append(split, fmt.Sprintf("%s %.1f", k, v/1e6))
		}
	}
	if len(split) > 0 {
		fmt.Fprintf(&b, "  (%s ms)", strings.Join(split, ", "))
	}
	for _, id := range s.Links() {
		name := id
		if l, ok := byID[id]; ok {
			name = l.OperationName
		}
		fmt.Fprintf(&b, "  waited on → %s", name)
	}
	return b.String()
}
