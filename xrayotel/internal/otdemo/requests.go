package main

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/goxray/xray/xrayotel"
	"github.com/goxray/xray/xrayotel/internal/jaegerapi"
)

// request is one GET /checkout: its trace, and how long the driver waited
// for it (the trace's own length is shorter).
type request struct {
	id   string
	took time.Duration
}

// checkout sends GET /checkout to the gateway, slow or not, with headers
// hdr, and returns the trace the gateway names.
func (p *pipeline) checkout(user string, slow bool, hdr http.Header) (request, error) {
	u := "http://" + p.gateway + "/checkout?user=" + user
	if slow {
		u += "&slow=1"
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return request{}, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return request{}, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	r := request{id: resp.Header.Get("X-Trace-Id"), took: time.Since(start)}
	if resp.StatusCode != http.StatusOK || r.id == "" {
		return r, fmt.Errorf("GET %s: %s, trace %q", u, resp.Status, r.id)
	}
	return r, nil
}

// keepHeaders starts a trace of the caller's own whose tracestate asks
// every service for its function spans: what
//
//	curl -H 'traceparent: 00-TRACEID-SPANID-01' -H 'tracestate: goxray=keep' http://GATEWAY/checkout?user=U
//
// sends.
func keepHeaders() (http.Header, string) {
	var tid [16]byte
	var sid [8]byte
	rand.Read(tid[:])
	rand.Read(sid[:])
	id := hex.EncodeToString(tid[:])
	h := http.Header{}
	h.Set("traceparent", "00-"+id+"-"+hex.EncodeToString(sid[:])+"-01")
	h.Set("tracestate", xrayotel.TraceStateKey+"="+xrayotel.TraceStateKeep)
	return h, id
}

// decisions reads the tail sampler's counts of traces sampled and not
// sampled from the collector's own metrics.
func (p *pipeline) decisions() (sampled, notSampled float64, err error) {
	r, err := http.Get("http://" + p.metrics + "/metrics")
	if err != nil {
		return 0, 0, err
	}
	defer r.Body.Close()
	lines := bufio.NewScanner(r.Body)
	otelcol := false
	for lines.Scan() {
		l := lines.Text()
		otelcol = otelcol || strings.HasPrefix(l, "otelcol_")
		// The counter appears with the first decision.
		if !strings.HasPrefix(l, "otelcol_processor_tail_sampling_global_count_traces_sampled") {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		v, err := strconv.ParseFloat(l[i+1:], 64)
		if err != nil {
			continue
		}
		if strings.Contains(l, `sampled="true"`) {
			sampled += v
		} else if strings.Contains(l, `sampled="false"`) {
			notSampled += v
		}
	}
	if err := lines.Err(); err != nil {
		return 0, 0, err
	}
	if !otelcol {
		return 0, 0, fmt.Errorf("%s serves no otelcol_ metrics: not the collector's telemetry", p.metrics)
	}
	return sampled, notSampled, nil
}

// waitDecisions waits until the tail sampler has decided at least
// sampled and notSampled traces in all.
func (p *pipeline) waitDecisions(sampled, notSampled float64, timeout time.Duration) error {
	for deadline := time.Now().Add(timeout); ; time.Sleep(300 * time.Millisecond) {
		s, n, err := p.decisions()
		if err == nil && s >= sampled && n >= notSampled {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the tail sampler decided %v sampled and %v not sampled traces in %v, want %v and %v (%v)", s, n, timeout, sampled, notSampled, err)
		}
	}
}

// complete reports whether t holds every span its services exported:
// each summary span (one per service whose request got function spans)
// says how many function spans and held spans it stands for, and each
// service's request span is there. want is the number of summaries.
func complete(t jaegerapi.Trace, want int) bool {
	n, sums := 0, 0
	for _, s := range t.Spans {
		if s.OperationName != xrayotel.SummaryName {
			continue
		}
		sums++
		n += 2 + int(num(s.Tag("goxray.exported"))) + int(num(s.Tag("goxray.held")))
	}
	return sums >= want && len(t.Spans) >= n
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}
