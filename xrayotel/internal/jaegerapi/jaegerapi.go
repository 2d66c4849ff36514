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
	References    []struct {
		RefType string `json:"refType"`
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

// Tag is the value of tag k, nil when s has none.
func (s Span) Tag(k string) any {
	for _, t := range s.Tags {
		if t.Key == k {
			return t.Value
		}
	}
	return nil
}

// Fetch polls addr (host:port of the query API) for trace id until done
// says the spans stored so far are all that is expected, or timeout
// passes. Jaeger stores spans asynchronously and answers 404 until it has
// some, so polling is the only way to wait.
func Fetch(addr, id string, timeout time.Duration, done func([]Span) bool) ([]Span, error) {
	var spans []Span
	for deadline := time.Now().Add(timeout); ; time.Sleep(300 * time.Millisecond) {
		if time.Now().After(deadline) {
			return spans, fmt.Errorf("jaeger holds %d spans of trace %s after %v, not all that was expected", len(spans), id, timeout)
		}
		r, err := http.Get("http://" + addr + "/api/traces/" + id)
		if err != nil {
			return nil, err
		}
		var body struct {
			Data []struct {
				Spans []Span `json:"spans"`
			} `json:"data"`
		}
		err = json.NewDecoder(r.Body).Decode(&body)
		r.Body.Close()
		if err != nil || len(body.Data) == 0 {
			continue // not stored yet: 404 with an error body
		}
		if spans = body.Data[0].Spans; done(spans) {
			return spans, nil
		}
	}
}
