package main

import (
	"bufio"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// jaegerConfig is the collector's configuration, with the default ports
// that start replaces.
//
//go:embed jaeger-tail-sampling.yaml
var jaegerConfig string

// Services, in the order they start: each is told the address of the
// one before it.
var services = []string{"store", "api", "gateway"}

// pipeline is Jaeger with tail sampling and the three services, on
// loopback.
type pipeline struct {
	out                  string // where logs, configs, binaries and the store's data go
	bin                  string // the services' binaries
	otlp, query, metrics string // Jaeger's addresses
	jaeger               *exec.Cmd
	jaegerDone           chan error
	svcs                 []*service
	gateway              string
	threshold, slowDisk  time.Duration
}

// service is one running service.
type service struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	addr  string
	log   string // its stderr
	done  chan error
}

// goList runs `go list -m -f {{.Dir}} [mod]` here: the directory of the
// module (the current one when mod is "").
func goList(mod string) (string, error) {
	args := []string{"list", "-m", "-f", "{{.Dir}}"}
	if mod != "" {
		args = append(args, mod)
	}
	b, err := exec.Command("go", args...).Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(b)), nil
}

// buildGoxray builds goxray's command into dir and returns its path.
func buildGoxray(dir string) (string, error) {
	root, err := goList("github.com/goxray/xray")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "goxray")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/goxray")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building goxray: %v\n%s", err, out)
	}
	return bin, nil
}

// buildServices builds the three services with `goxray build` (every
// function of this module traced, down to the threshold) into dir.
func buildServices(goxray, dir string) error {
	mod, err := goList("")
	if err != nil {
		return err
	}
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, s := range services {
		args = append(args, "./internal/otdemo/"+s)
	}
	cmd := exec.Command(goxray, args...)
	cmd.Dir = mod
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go tool goxray %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// freeAddr returns a loopback address no one listened on a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startJaeger runs jaeger with the tail-sampling configuration on free
// loopback ports and waits until its query API answers.
func (p *pipeline) startJaeger(bin string) error {
	var addrs [4]string
	for i := range addrs {
		a, err := freeAddr()
		if err != nil {
			return err
		}
		addrs[i] = a
	}
	p.otlp, p.query, p.metrics = addrs[0], addrs[1], addrs[3]
	_, mport, _ := net.SplitHostPort(p.metrics)
	cfg := strings.NewReplacer("127.0.0.1:4318", p.otlp, "127.0.0.1:16686", p.query, "127.0.0.1:16685", addrs[2],
		"port: 8888", "port: "+mport).Replace(jaegerConfig)
	path := filepath.Join(p.out, "jaeger.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(p.out, "jaeger.log"))
	if err != nil {
		return err
	}
	p.jaeger = exec.Command(bin, "--config", path)
	p.jaeger.Env = append(os.Environ(), "JAEGER_LISTEN_HOST=127.0.0.1")
	p.jaeger.Stdout, p.jaeger.Stderr = log, log
	if err := p.jaeger.Start(); err != nil {
		log.Close()
		return err
	}
	p.jaegerDone = make(chan error, 1)
	go func() { p.jaegerDone <- p.jaeger.Wait(); log.Close() }()
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		select {
		case err := <-p.jaegerDone:
			p.jaeger = nil
			return fmt.Errorf("jaeger exited (%v); see %s", err, log.Name())
		default:
		}
		if r, err := http.Get("http://" + p.query + "/api/services"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("jaeger's query API did not answer in 90 s; see %s", log.Name())
		}
	}
}

// startServices starts store, api and gateway, each exporting to Jaeger;
// keep makes them honour tracestate goxray=keep.
func (p *pipeline) startServices(keep bool) error {
	data := filepath.Join(p.out, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	prev := ""
	for _, name := range services {
		args := []string{"-otlp", p.otlp, "-dir", data, "-threshold", p.threshold.String(), "-keep=" + strconv.FormatBool(keep)}
		switch name {
		case "store":
			args = append(args, "-slowdisk", p.slowDisk.String())
		case "api":
			args = append(args, "-store", prev)
		case "gateway":
			args = append(args, "-api", prev)
		}
		s, err := p.startService(name, args)
		if err != nil {
			return err
		}
		prev = s.addr
	}
	p.gateway = prev
	return nil
}

func (p *pipeline) startService(name string, args []string) (*service, error) {
	s := &service{name: name, log: filepath.Join(p.out, fmt.Sprintf("%s-%d.log", name, len(p.svcs)))}
	log, err := os.Create(s.log)
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(filepath.Join(p.bin, name), args...)
	s.cmd.Stderr = log
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	p.svcs = append(p.svcs, s)
	s.done = make(chan error, 1)
	lines := bufio.NewScanner(out)
	if lines.Scan() {
		s.addr, _ = strings.CutPrefix(lines.Text(), "listening ")
	}
	go func() {
		io.Copy(io.Discard, out)
		s.done <- s.cmd.Wait()
		log.Close()
	}()
	if s.addr == "" {
		return nil, fmt.Errorf("%s did not say where it listens; see %s", name, s.log)
	}
	return s, nil
}

// stopServices closes the services' stdin, which makes each flush its
// spans and exit, gateway first, and waits for them. It returns the
// counters each printed on exit, by service.
func (p *pipeline) stopServices() (map[string]string, error) {
	var errs []error
	counters := map[string]string{}
	for i := len(p.svcs) - 1; i >= 0; i-- {
		s := p.svcs[i]
		s.stdin.Close()
		select {
		case err := <-s.done:
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %v; see %s", s.name, err, s.log))
			}
		case <-time.After(60 * time.Second):
			s.cmd.Process.Kill()
			<-s.done
			errs = append(errs, fmt.Errorf("%s did not exit 60 s after its stdin closed; see %s", s.name, s.log))
		}
		counters[s.name] = processorLine(s)
	}
	p.svcs = nil
	return counters, errors.Join(errs...)
}

// close stops everything still running.
func (p *pipeline) close() {
	for _, s := range p.svcs {
		s.cmd.Process.Kill()
		<-s.done
	}
	p.svcs = nil
	if p.jaeger != nil {
		p.jaeger.Process.Kill()
		<-p.jaegerDone
		p.jaeger = nil
	}
}

// processorLine returns the xrayotel counters service s printed on exit.
func processorLine(s *service) string {
	b, _ := os.ReadFile(s.log)
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "xrayotel: slow ") {
			return l
		}
	}
	return ""
}
