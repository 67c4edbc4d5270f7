package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/openkeel/openkeel-magnum/internal/api/microversion"
	"github.com/openkeel/openkeel-magnum/internal/magnum"
)

// RequestIDHeader is the response header carrying the request ID
// (oslo.middleware request_id).
const RequestIDHeader = "X-Openstack-Request-Id"

// reqInfo is the per-request state the pipeline hands to handlers.
type reqInfo struct {
	requestID string
	baseURL   string // scheme://host[:port][prefix], no trailing slash
	version   microversion.Version
	route     *Route
	body      []byte
	query     map[string]any
	// markerInPath is set for "<collection>/<marker>/detail" requests.
	markerInPath bool
}

type infoKey struct{}

func info(r *http.Request) *reqInfo {
	if i, ok := r.Context().Value(infoKey{}).(*reqInfo); ok {
		return i
	}
	return &reqInfo{}
}

// RequestID returns the request ID ("req-<uuid>") of r.
func RequestID(r *http.Request) string { return info(r).requestID }

// BaseURL returns the application URL of r (Magnum's
// pecan.request.application_url): scheme and host, after the proxy headers,
// plus any X-Forwarded-Prefix, without a trailing slash.
func BaseURL(r *http.Request) string { return info(r).baseURL }

// APIVersion returns the negotiated microversion of a v1 request.
func APIVersion(r *http.Request) microversion.Version { return info(r).version }

// Body returns the request body read by the pipeline (nil when empty). Its
// content type has been checked to be JSON, except for form bodies of
// handlers that take none.
func Body(r *http.Request) []byte { return info(r).body }

func routeID(r *http.Request) string {
	if rt := info(r).route; rt != nil {
		return rt.ID
	}
	return ""
}

// statusWriter records whether the response was started.
type statusWriter struct {
	http.ResponseWriter
	status int
	before func(h http.Header, status int)
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status != 0 {
		return
	}
	w.status = code
	if w.before != nil {
		w.before(w.ResponseWriter.Header(), code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// pipeline builds the middleware chain, outermost first.
func (s *server) pipeline() http.Handler {
	inner := http.HandlerFunc(s.serveAPI)
	cors := s.cors(s.proxyHeaders(inner))
	return s.recoverPanics(s.requestID(s.healthcheckOr(cors)))
}

// recoverPanics turns a panic into Magnum's 500 body, logged once with the
// request ID.
func (s *server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.ErrorContext(r.Context(), "panic while serving request",
				slog.String("request_id", w.Header().Get(RequestIDHeader)),
				slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.String("panic", fmt.Sprint(p)))
			if sw.status != 0 {
				return // too late to change the answer
			}
			h := w.Header()
			for k := range h {
				if !strings.EqualFold(k, RequestIDHeader) {
					h.Del(k)
				}
			}
			writeJSON(sw, http.StatusInternalServerError, errorEnvelope{Errors: []any{errorItem{
				Code: "server", Status: 500, Title: Title(unknownMessage), Detail: unknownMessage, Links: []string{},
			}}})
		}()
		next.ServeHTTP(sw, r)
	})
}

// requestID sets x-openstack-request-id on every response.
func (s *server) requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := s.opts.NewRequestID()
		w.Header().Set(RequestIDHeader, id)
		i := &reqInfo{requestID: id}
		ctx := context.WithValue(r.Context(), infoKey{}, i)
		// The Authenticator reads the request ID from a context already
		// present; authentication replaces it with the caller's.
		ctx = magnum.WithRequestContext(ctx, &magnum.RequestContext{RequestID: id})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// simpleHeaders are always allowed in a CORS preflight (oslo.middleware).
var simpleHeaders = []string{"Accept", "Accept-Language", "Content-Type", "Cache-Control",
	"Content-Language", "Expires", "Last-Modified", "Pragma"}

// corsOrigin returns the origin value to answer with, or "" when the origin
// is not allowed.
func (s *server) corsOrigin(origin string) string {
	star := false
	for _, o := range s.opts.CORS.AllowedOrigin {
		if o == origin {
			return origin
		}
		if o == "*" {
			star = true
		}
	}
	if star {
		return "*"
	}
	return ""
}

// cors implements oslo.middleware's CORS filter: simple requests get the
// allow-origin headers; OPTIONS requests go through the application and, if
// it did not answer 2xx, the answer becomes an empty 200, decorated with the
// preflight headers when the preflight is acceptable.
func (s *server) cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, hasOrigin := r.Header["Origin"]
		if r.Method == http.MethodOptions {
			rec := &bufferWriter{header: http.Header{}}
			next.ServeHTTP(rec, r)
			h := w.Header()
			if rec.status >= 200 && rec.status < 300 {
				for k, vs := range rec.header {
					h[k] = vs
				}
				if h.Get("Access-Control-Allow-Origin") == "" && hasOrigin {
					s.preflight(h, r)
				}
				w.WriteHeader(rec.status)
				_, _ = w.Write(rec.buf.Bytes())
				return
			}
			// Non-2xx: a bare 200 without Content-Type.
			if hasOrigin {
				s.preflight(h, r)
			}
			h.Set("Content-Length", "0")
			w.WriteHeader(http.StatusOK)
			return
		}
		if !hasOrigin {
			next.ServeHTTP(w, r)
			return
		}
		origin := s.corsOrigin(r.Header.Get("Origin"))
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		sw := &statusWriter{ResponseWriter: w, before: func(h http.Header, _ int) {
			if h.Get("Access-Control-Allow-Origin") != "" {
				return
			}
			if v := h.Get("Vary"); v != "" {
				h.Set("Vary", v+",Origin")
			} else {
				h.Set("Vary", "Origin")
			}
			h.Set("Access-Control-Allow-Origin", origin)
			if s.opts.CORS.AllowCredentials {
				h.Set("Access-Control-Allow-Credentials", "true")
			}
			if len(s.opts.CORS.ExposeHeaders) > 0 {
				h.Set("Access-Control-Expose-Headers", strings.Join(s.opts.CORS.ExposeHeaders, ","))
			}
		}}
		next.ServeHTTP(sw, r)
	})
}

// preflight adds the preflight headers when origin, method and headers are
// all allowed (oslo.middleware _apply_cors_preflight_headers).
func (s *server) preflight(h http.Header, r *http.Request) {
	origin := s.corsOrigin(r.Header.Get("Origin"))
	if origin == "" {
		return
	}
	if _, ok := r.Header["Access-Control-Request-Method"]; !ok {
		return
	}
	method := r.Header.Get("Access-Control-Request-Method")
	var reqHeaders []string
	for _, v := range strings.Split(strings.Join(r.Header.Values("Access-Control-Request-Headers"), ","), ",") {
		if v = strings.TrimSpace(v); v != "" {
			reqHeaders = append(reqHeaders, v)
		}
	}
	allowedMethod := false
	for _, m := range s.opts.CORS.AllowMethods {
		if m == method {
			allowedMethod = true
		}
	}
	if !allowedMethod {
		return
	}
	permitted := map[string]bool{}
	for _, x := range append(append([]string{}, s.opts.CORS.AllowHeaders...), simpleHeaders...) {
		permitted[strings.ToUpper(x)] = true
	}
	for _, x := range reqHeaders {
		if !permitted[strings.ToUpper(x)] {
			return
		}
	}
	h.Set("Vary", "Origin")
	h.Set("Access-Control-Allow-Origin", origin)
	if s.opts.CORS.AllowCredentials {
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	if s.opts.CORS.MaxAge != 0 {
		h.Set("Access-Control-Max-Age", strconv.Itoa(s.opts.CORS.MaxAge))
	}
	h.Set("Access-Control-Allow-Methods", method)
	if len(reqHeaders) > 0 {
		h.Set("Access-Control-Allow-Headers", strings.Join(reqHeaders, ","))
	}
}

// bufferWriter buffers a whole response (CORS preflight).
type bufferWriter struct {
	header http.Header
	status int
	buf    bytes.Buffer
}

func (b *bufferWriter) Header() http.Header { return b.header }
func (b *bufferWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}
func (b *bufferWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.buf.Write(p)
}

// proxyHeaders computes the application URL, honouring the proxy headers
// when enabled (oslo.middleware http_proxy_to_wsgi: Forwarded wins over the
// X-Forwarded-* headers; X-Forwarded-Prefix prefixes the script name).
func (s *server) proxyHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		host := r.Host
		prefix := ""
		if s.opts.ProxyHeaders {
			if fwd := r.Header.Get("Forwarded"); fwd != "" {
				first, _, _ := strings.Cut(fwd, ",")
				for _, kv := range strings.Split(first, ";") {
					k, val, _ := strings.Cut(kv, "=")
					k = strings.ToLower(strings.TrimSpace(k))
					val = strings.TrimSpace(val)
					switch {
					case k == "proto" && val != "":
						scheme = val
					case k == "host" && val != "":
						host = val
					}
				}
			} else {
				if p := r.Header.Get("X-Forwarded-Proto"); p != "" {
					scheme = p
				}
				if h := r.Header.Get("X-Forwarded-Host"); h != "" {
					host = h
				}
			}
			prefix = r.Header.Get("X-Forwarded-Prefix")
		}
		info(r).baseURL = scheme + "://" + hostURL(scheme, host) + prefix
		next.ServeHTTP(w, r)
	})
}

// hostURL drops the default port, as WebOb's host_url does.
func hostURL(scheme, host string) string {
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		port := host[i+1:]
		if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
			return host[:i]
		}
	}
	return host
}

// isPublic reports whether the raw path is one of the public routes (the
// auth filter strips trailing slashes and allows a ".json" suffix).
func (s *server) isPublic(path string) bool {
	p := strings.TrimRight(path, "/")
	if p == "" {
		p = path
	}
	for _, pr := range s.opts.PublicRoutes {
		if p == pr || p == pr+".json" {
			return true
		}
	}
	return false
}

// authenticate runs the Authenticator for non-public paths; it writes the
// 401/503 and returns false when the request must stop.
func (s *server) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if s.isPublic(r.URL.Path) {
		return r, true
	}
	rc, err := s.opts.Auth.Authenticate(r)
	if err != nil || rc == nil {
		var hs interface{ HTTPStatus() int }
		if errors.As(err, &hs) && hs.HTTPStatus() == http.StatusServiceUnavailable {
			s.log.WarnContext(r.Context(), "token validation unavailable", slog.String("request_id", RequestID(r)), slog.Any("error", err))
			write503(w, r)
			return r, false
		}
		s.write401(w)
		return r, false
	}
	rc.RequestID = RequestID(r)
	return r.WithContext(magnum.WithRequestContext(r.Context(), rc)), true
}
