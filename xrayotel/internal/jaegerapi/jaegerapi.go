// Package jaegerapi reads a trace back from Jaeger's query API
// (GET /api/traces/<id>), for the integration test and the demo: what the
// backend stored is the evidence that the export worked.
package jaegerapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Span is the part of a stored span the checks read.
type Span struct {
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	ProcessID     string `json:"processID"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	StartTime int64 `json:"startTime"` // µs since the epoch
	Duration  int64 `json:"duration"`  // µs
	Tags      []struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	} `json:"tags"`
	Logs []Log `json:"logs"` // the span's events
}

// Log is a span event as Jaeger stores it: its name is field "event".
type Log struct {
	Timestamp int64 `json:"timestamp"` // µs since the epoch
	Fields    []struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	} `json:"fields"`
}

// Field is the value of field k, nil when l has none.
func (l Log) Field(k string) any {
	for _, f := range l.Fields {
		if f.Key == k {
			return f.Value
		}
	}
	return nil
}

// Parent is the id of the span s is a child of, "" for a root.
func (s Span) Parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// Links returns the span ids s links to (span links are FOLLOWS_FROM
// references in Jaeger's model).
func (s Span) Links() []string {
	var ids []string
	for _, r := range s.References {
		if r.RefType == "FOLLOWS_FROM" {
			ids = append(ids, r.SpanID)
		}
	}
	return ids
}

// Tag is the value of tag k, nil when s has none.
func (s Span) Tag(k string) any {
	for _, t := range s.Tags {
		if t.Key == k {
			return t.Value
		}
	}
	return nil
}

// Trace is a trace as the query API returns it: its spans, and the
// processes (services) that sent them.
type Trace struct {
	Spans     []Span `json:"spans"`
	Processes map[string]struct {
		ServiceName string `json:"serviceName"`
	} `json:"processes"`
}

// Service is the name of the service that sent s.
func (t Trace) Service(s Span) string { return t.Processes[s.ProcessID].ServiceName }

// Fetch polls addr (host:port of the query API) for trace id until done
// says the spans stored so far are all that is expected, or timeout
// passes. Jaeger stores spans asynchronously and answers 404 until it has
// some, so polling is the only way to wait.
func Fetch(addr, id string, timeout time.Duration, done func([]Span) bool) ([]Span, error) {
	t, err := FetchTrace(addr, id, timeout, func(t Trace) bool { return done(t.Spans) })
	return t.Spans, err
}

// FetchTrace is Fetch with the trace's processes.
func FetchTrace(addr, id string, timeout time.Duration, done func(Trace) bool) (Trace, error) {
	var t Trace
	for deadline := time.Now().Add(timeout); ; time.Sleep(300 * time.Millisecond) {
		if time.Now().After(deadline) {
			return t, fmt.Errorf("jaeger holds %d spans of trace %s after %v, not all that was expected", len(t.Spans), id, timeout)
		}
		got, found, err := Get(addr, id)
		if err != nil {
			return t, err
		}
		if !found {
			continue
		}
		if t = got; done(t) {
			return t, nil
		}
	}
}

// Get reads trace id once; found is false when Jaeger holds none of it.
func Get(addr, id string) (t Trace, found bool, err error) {
	r, err := http.Get("http://" + addr + "/api/traces/" + id)
	if err != nil {
		return t, false, err
	}
	defer r.Body.Close()
	var body struct {
		Data []Trace `json:"data"`
	}
	if r.StatusCode == http.StatusNotFound {
		return t, false, nil
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return t, false, fmt.Errorf("jaeger: %s: %v", r.Status, err)
	}
	if len(body.Data) == 0 || len(body.Data[0].Spans) == 0 {
		return t, false, nil
	}
	return body.Data[0], true, nil
}
