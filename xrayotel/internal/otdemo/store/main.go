// Command store is the last of the three services of `make demo-otel`:
// its gRPC method Put appends a record to its log on disk and fsyncs it.
// A request whose metadata carries demo-slow (svc.SlowKey) stands for a
// slow disk: its record is followed by 64 KiB chunks, each fsynced,
// until -slowdisk has passed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/goxray/xray/xrayotel/internal/otdemo/svc"
)

var slowDisk = flag.Duration("slowdisk", 300*time.Millisecond, "how long the slow request's write takes")

type store struct {
	mu  sync.Mutex
	log *os.File
}

// Put appends the record.
func (s *store) Put(ctx context.Context, rec *wrapperspb.StringValue) (*wrapperspb.Int64Value, error) {
	slow := len(metadata.ValueFromIncomingContext(ctx, svc.SlowKey)) > 0
	n, err := s.appendRecord(rec.GetValue(), slow)
	if err != nil {
		return nil, err
	}
	return wrapperspb.Int64(n), nil
}

// appendRecord frames the record and writes it under the log's lock.
//
//xray:always
func (s *store) appendRecord(rec string, slow bool) (int64, error) {
	line := fmt.Appendf(nil, "%d %s\n", time.Now().UnixNano(), rec)
	s.mu.Lock()
	defer s.mu.Unlock()
	return writeRecord(s.log, line, slow)
}

// writeRecord writes line and fsyncs; a slow write goes on writing and
// fsyncing chunks for -slowdisk.
//
//xray:always
func writeRecord(f *os.File, line []byte, slow bool) (int64, error) {
	start := time.Now()
	n, err := f.Write(line)
	if err != nil {
		return 0, err
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	total := int64(n)
	var chunk [64 << 10]byte
	for slow && time.Since(start) < *slowDisk {
		n, err := f.Write(chunk[:])
		if err != nil {
			return total, err
		}
		if err := f.Sync(); err != nil {
			return total, err
		}
		total += int64(n)
	}
	return total, nil
}

func main() {
	f := svc.Define()
	flag.Parse()
	s, err := svc.Start("store", f)
	if err != nil {
		svc.Fatal("store", err)
	}
	log, err := os.OpenFile(filepath.Join(f.Dir, "store.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		svc.Fatal("store", err)
	}
	ln, err := svc.Listen()
	if err != nil {
		svc.Fatal("store", err)
	}
	srv := grpc.NewServer(grpc.StatsHandler(otelgrpc.NewServerHandler()))
	srv.RegisterService(&svc.StoreDesc, &store{log: log})
	go srv.Serve(ln)
	s.Wait()
	srv.Stop()
	log.Close()
}
