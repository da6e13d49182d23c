package api

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
)

// RequestIDHeader carries the request id in both directions.
const RequestIDHeader = "X-Request-ID"

const loggerKey = "cairn.logger"

// openPaths answer without a token: probes must work before anyone can
// authenticate.
var openPaths = map[string]bool{"/healthz": true, "/readyz": true}

// requestLogger returns the request's logger (with its request id), or base.
func requestLogger(c echo.Context, base *slog.Logger) *slog.Logger {
	if l, ok := c.Get(loggerKey).(*slog.Logger); ok {
		return l
	}
	return base
}

// validRequestID accepts a caller's id only if it is short and plain, so it
// cannot forge log lines or headers.
func validRequestID(id string) bool {
	return plainID(id, 64)
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// httpMetrics are the API's own Prometheus series.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) (*httpMetrics, error) {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cairn_http_requests_total",
			Help: "HTTP API requests by route, method and status.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cairn_http_request_duration_seconds",
			Help:    "HTTP API request latency by route and method.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register HTTP metrics: %w", err)
		}
	}
	return m, nil
}

// observe gives each request an id and a logger carrying it, writes errors
// in the error shape before the status is read, then logs and counts the
// request.
func observe(base *slog.Logger, metrics *httpMetrics) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			id := c.Request().Header.Get(RequestIDHeader)
			if !validRequestID(id) {
				id = newRequestID()
			}
			c.Response().Header().Set(RequestIDHeader, id)
			logger := base.With("request_id", id)
			c.Set(loggerKey, logger)

			if err := next(c); err != nil {
				c.Error(err)
			}

			route := c.Path()
			if route == "" {
				route = "unmatched"
			}
			status := c.Response().Status
			elapsed := time.Since(start)
			if metrics != nil {
				metrics.requests.WithLabelValues(route, c.Request().Method, strconv.Itoa(status)).Inc()
				metrics.duration.WithLabelValues(route, c.Request().Method).Observe(elapsed.Seconds())
			}
			level := slog.LevelInfo
			if openPaths[c.Request().URL.Path] || c.Request().URL.Path == "/metrics" {
				level = slog.LevelDebug
			}
			logger.Log(c.Request().Context(), level, "request",
				"method", c.Request().Method,
				"path", c.Request().URL.Path,
				"route", route,
				"status", status,
				"bytes", c.Response().Size,
				"duration", elapsed)
			return nil
		}
	}
}

// recoverPanics turns a panic into a 500 in the error shape and logs it with
// its stack, so one bad request never takes the server down.
func recoverPanics(base *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) (err error) {
			defer func() {
				if r := recover(); r != nil {
					if r == http.ErrAbortHandler {
						panic(r)
					}
					requestLogger(c, base).Error("panic in handler", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
					err = internalError(fmt.Errorf("panic: %v", r))
				}
			}()
			return next(c)
		}
	}
}

// principalKey holds the name of the principal a request acts as.
const principalKey = "cairn.principal"

// principal is the name of the principal the request acts as: a store
// token's principal or a named token's name; "" for the anonymous token
// or none.
func principal(c echo.Context) string {
	name, _ := c.Get(principalKey).(string)
	return name
}

// bearer is one of the environment's tokens: its hash, and its name (""
// for the anonymous token).
type bearer struct {
	name string
	sum  [sha256.Size]byte
}

// limitBody refuses a declared length over the limit at once and caps what
// a handler can read otherwise; readBody maps the cap to 413. Codec
// requests have their own limit.
func limitBody(apiLimit, codecLimit int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			limit := apiLimit
			if strings.HasPrefix(req.URL.Path, CodecPrefix) {
				limit = codecLimit
			}
			if req.ContentLength > limit {
				return &Error{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("request body exceeds %d bytes", limit)}
			}
			req.Body = http.MaxBytesReader(c.Response(), req.Body, limit)
			return next(c)
		}
	}
}
