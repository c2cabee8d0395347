package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"k8s.io/client-go/tools/leaderelection"
)

// healthServer serves /healthz (the process is alive and, when leading, still
// renewing its lease) and /readyz (the process can do its job: its caches are
// synced, or it is a standby waiting for the lease). A standby counts as
// ready so that a rolling update of a one-replica Deployment can proceed.
type healthServer struct {
	srv      *http.Server
	ln       net.Listener
	done     chan struct{}
	watchdog *leaderelection.HealthzAdaptor
}

// startHealthServer listens on addr at once, so a taken port is reported
// before anything else starts. ready is polled on every /readyz request.
// It serves nothing else: /metrics has its own server (startMetricsServer).
func startHealthServer(addr string, watchdog *leaderelection.HealthzAdaptor, ready func() error) (*healthServer, error) {
	h := &healthServer{watchdog: watchdog}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if h.watchdog != nil {
			if err := h.watchdog.Check(r); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := ready(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	if err := h.listen("health server", addr, mux); err != nil {
		return nil, err
	}
	return h, nil
}

// startMetricsServer serves /metrics, on --metrics-addr, apart from the
// health address, and with profiling Go's profiles under /debug/pprof/: the
// metrics port, loopback by default, is the one not opened to the cluster.
func startMetricsServer(addr string, metrics http.Handler, profiling bool) (*healthServer, error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics)
	if profiling {
		// The index serves every named profile (heap, goroutine, ...);
		// the other four are not profiles and need their own handlers.
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	h := &healthServer{}
	if err := h.listen("metrics server", addr, mux); err != nil {
		return nil, err
	}
	return h, nil
}

// canListen reports whether a TCP server can listen on addr now, by
// binding it and letting it go: run checks --metrics-addr this way at start,
// so a taken port or an address of no local interface fails the start
// rather than leaving the binary running without metrics.
func canListen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return ln.Close()
}

func (h *healthServer) listen(what, addr string, mux *http.ServeMux) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	h.ln, h.done = ln, make(chan struct{})
	h.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		defer close(h.done)
		// Serve only fails once the listener is closed by stop; there is
		// nothing left to report then.
		_ = h.srv.Serve(ln)
	}()
	return nil
}

// Addr is the address actually bound, useful with port 0.
func (h *healthServer) Addr() string { return h.ln.Addr().String() }

// stop shuts the server down and waits for its goroutine.
func (h *healthServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = h.srv.Shutdown(ctx)
	<-h.done
}
