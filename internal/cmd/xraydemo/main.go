package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/goxray/xray"
)

// Cache is a small map guarded by a mutex, with entries that expire.
type Cache struct {
	mu sync.Mutex
	m  map[string]entry
}

type entry struct {
	v       []byte
	expires time.Time
}

func (c *Cache) Get(key string) ([]byte, bool) {
	xray.Enter(idCacheGet)
	defer xray.Exit(idCacheGet)
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || time.Now().After(e.expires) {
		return nil, false
	}
	return e.v, true
}

func (c *Cache) Put(key string, v []byte) {
	xray.Enter(idCachePut)
	defer xray.Exit(idCachePut)
	c.mu.Lock()
	c.m[key] = entry{v, time.Now().Add(50 * time.Millisecond)}
	c.mu.Unlock()
}

// DB stands in for a database: queries sleep a log-normally distributed
// time (median ~1 ms, a long tail) and return made-up rows.
type DB struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (db *DB) Query(table string, id int) []byte {
	xray.EnterArgs(idQuery, uint64(id))
	defer xray.Exit(idQuery)
	db.mu.Lock()
	d := time.Duration(math.Exp(db.r.NormFloat64()*0.8) * float64(time.Millisecond))
	db.mu.Unlock()
	time.Sleep(d)
	return []byte(fmt.Sprintf(`{"table":%q,"id":%d,"rows":%d}`, table, id, id%17))
}

// Server serves /user/<id>.
type Server struct {
	cache *Cache
	db    *DB
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	xray.Enter(idServe)
	defer xray.Exit(idServe)
	id, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/user/"))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	s.handleUser(w, id)
}

func (s *Server) handleUser(w http.ResponseWriter, id int) {
	xray.EnterArgs(idUser, uint64(id))
	defer xray.Exit(idUser)
	var profile, orders, recs []byte
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); profile = s.fetchProfile(id) }()
	go func() { defer wg.Done(); orders = s.fetchOrders(id) }()
	go func() { defer wg.Done(); recs = s.fetchRecommendations(id) }()
	wg.Wait()
	s.render(w, profile, orders, recs)
}

func (s *Server) cached(table string, id int) []byte {
	key := table + "/" + strconv.Itoa(id)
	if v, ok := s.cache.Get(key); ok {
		return v
	}
	v := s.db.Query(table, id)
	s.cache.Put(key, v)
	return v
}

func (s *Server) fetchProfile(id int) []byte {
	xray.Enter(idProfile)
	defer xray.Exit(idProfile)
	return s.cached("profiles", id)
}

func (s *Server) fetchOrders(id int) []byte {
	xray.Enter(idOrders)
	defer xray.Exit(idOrders)
	return s.cached("orders", id%50)
}

func (s *Server) fetchRecommendations(id int) []byte {
	xray.Enter(idRecommend)
	defer xray.Exit(idRecommend)
	items := s.cached("items", id%7)
	best := 0.0
	for i := 0; i < 200; i++ {
		best = math.Max(best, score(items, i))
	}
	return []byte(strconv.FormatFloat(best, 'f', 3, 64))
}

// score is deliberately CPU-bound: something to see in the flame graph.
func score(items []byte, k int) float64 {
	xray.Enter(idScore)
	defer xray.Exit(idScore)
	s := 0.0
	for i, b := range items {
		s += math.Sin(float64(int(b)*k+i)) * math.Sqrt(float64(i+1))
	}
	return s
}

func (s *Server) render(w http.ResponseWriter, profile, orders, recs []byte) {
	xray.Enter(idRender)
	defer xray.Exit(idRender)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]json.RawMessage{
		"profile": profile, "orders": orders, "recommendations": json.RawMessage(strconv.Quote(string(recs))),
	})
}

// client requests random users until stop closes.
func client(base string, seed int64, stop <-chan struct{}, done *sync.WaitGroup) {
	defer done.Done()
	xray.Enter(idClient)
	defer xray.Exit(idClient)
	r := rand.New(rand.NewSource(seed))
	hc := &http.Client{Timeout: 5 * time.Second}
	for {
		select {
		case <-stop:
			return
		default:
		}
		resp, err := hc.Get(fmt.Sprintf("%s/user/%d", base, r.Intn(500)))
		if err != nil {
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func main() {
	clients := flag.Int("clients", 8, "concurrent client goroutines")
	duration := flag.Duration("duration", 30*time.Second, "run at most this long")
	flag.Parse()
	name := filepath.Base(os.Args[0])

	startTracing()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: &Server{
		cache: &Cache{m: map[string]entry{}},
		db:    &DB{r: rand.New(rand.NewSource(1))},
	}}
	go srv.Serve(ln)
	fmt.Printf("%s: pid %d serving on %s with %d clients; `kill -USR1 %d` writes a trace\n",
		name, os.Getpid(), ln.Addr(), *clients, os.Getpid())

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < *clients; i++ {
		wg.Add(1)
		go client("http://"+ln.Addr().String(), int64(i), stop, &wg)
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-term:
	case <-time.After(*duration):
	}
	close(stop)
	wg.Wait()
	srv.Close()
	stopTracing()
	fmt.Printf("%s: stopped\n", name)
}
