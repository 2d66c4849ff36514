// Command api is the middle of the three services of `make demo-otel`:
// GET /profile/{user} builds the user's profile and records the visit in
// the store over gRPC (otelgrpc's client span), passing the slow flag
// (slow=1) on as gRPC metadata.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"hash/fnv"
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/goxray/xray/xrayotel/internal/otdemo/svc"
)

type api struct {
	store *grpc.ClientConn
}

type profile struct {
	User   string   `json:"user"`
	Tier   string   `json:"tier"`
	Badges []string `json:"badges"`
}

// profile serves GET /profile/{user}.
func (a *api) profile(w http.ResponseWriter, r *http.Request) {
	user := r.PathValue("user")
	p := loadProfile(user)
	if err := a.recordVisit(r.Context(), user, r.URL.Query().Get("slow") == "1"); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(p)
}

// loadProfile computes the user's profile.
//
//xray:always
func loadProfile(user string) profile {
	h := fnv.New64a()
	h.Write([]byte(user))
	p := profile{User: user, Tier: []string{"free", "plus", "pro"}[h.Sum64()%3]}
	for i, b := range []string{"early", "reviewer", "streak", "helper"} {
		if h.Sum64()>>(8*i)&1 == 1 {
			p.Badges = append(p.Badges, b)
		}
	}
	return p
}

// recordVisit asks the store to append the visit, and waits for it.
//
//xray:always
func (a *api) recordVisit(ctx context.Context, user string, slow bool) error {
	if slow {
		ctx = metadata.AppendToOutgoingContext(ctx, svc.SlowKey, "1")
	}
	return a.store.Invoke(ctx, svc.StorePut, wrapperspb.String("visit "+user), new(wrapperspb.Int64Value))
}

func main() {
	f := svc.Define()
	storeAddr := flag.String("store", "", "the store's address")
	flag.Parse()
	s, err := svc.Start("api", f)
	if err != nil {
		svc.Fatal("api", err)
	}
	conn, err := grpc.NewClient(*storeAddr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStatsHandler(otelgrpc.NewClientHandler()))
	if err != nil {
		svc.Fatal("api", err)
	}
	a := &api{store: conn}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /profile/{user}", a.profile)
	ln, err := svc.Listen()
	if err != nil {
		svc.Fatal("api", err)
	}
	srv := &http.Server{Handler: otelhttp.NewHandler(mux, "GET /profile/{user}")}
	go srv.Serve(ln)
	s.Wait()
	srv.Close()
	conn.Close()
}
