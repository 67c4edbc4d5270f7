package reconcile

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestWatchConfigKeepsWatchesOpen checks that the manager's connection
// bounds ordinary requests by the configured timeout but leaves watches
// open past it, without asking the API server to end them early.
func TestWatchConfigKeepsWatchesOpen(t *testing.T) {
	const timeout = 50 * time.Millisecond
	release := make(chan struct{})
	watchQuery := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" {
			watchQuery <- r.URL.RawQuery
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
			_, _ = io.WriteString(w, "done")
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
			_, _ = io.WriteString(w, "not cut")
		}
	}))
	defer srv.Close()
	defer close(release)

	cfg := &rest.Config{Host: srv.URL, Timeout: timeout}
	wc := watchConfig(cfg)
	if wc.Timeout != 0 || cfg.Timeout != timeout {
		t.Fatalf("watchConfig timeouts: copy %v (want 0), original %v (want %v)", wc.Timeout, cfg.Timeout, timeout)
	}
	hc, err := rest.HTTPClientFor(wc)
	if err != nil {
		t.Fatal(err)
	}

	watch, err := hc.Get(srv.URL + "/apis/cluster.x-k8s.io/v1beta2/namespaces/ns/clusters?watch=true&timeoutSeconds=300")
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Body.Close()
	if q := <-watchQuery; q != "watch=true&timeoutSeconds=300" {
		t.Errorf("watch query = %q, want no timeout added", q)
	}

	// An ordinary request that gets no answer is cut at the timeout; the
	// watch opened before it has then been open longer than that.
	resp, err := hc.Get(srv.URL + "/api/v1/namespaces/ns/secrets/s")
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("a request without an answer returned %q, want a timeout", body)
	}
	if !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
		t.Errorf("request error = %v, want a deadline", err)
	}

	release <- struct{}{}
	body, err := io.ReadAll(watch.Body)
	if err != nil || string(body) != "done" {
		t.Errorf("watch body = %q, %v; want done, nil (open past the timeout)", body, err)
	}
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}
