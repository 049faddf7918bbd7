package httpapi

import (
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Metrics holds jetgraph's Prometheus registry and the collectors the HTTP layer feeds itself.
// Other parts register theirs on Registry (see cmd/jetgraph).
type Metrics struct {
	Registry *prometheus.Registry

	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// routes keeps the collectors of each (method, route, status) met, so that a request does
	// not hash its labels into the vectors: a map read without a lock (and without boxing its
	// key, as a sync.Map would), replaced by a copy with one more key under routesMu.
	routes   atomic.Pointer[map[routeKey]routeCollectors]
	routesMu sync.Mutex
}

// maxRouteCollectors bounds routes.
const maxRouteCollectors = 4096

// routeKey names the collectors of the requests of one method, route and status.
type routeKey struct {
	method, route string
	status        int
}

// routeCollectors are the collectors of one routeKey.
type routeCollectors struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// collectors returns the collectors of k, kept in routes (up to maxRouteCollectors) for the
// methods of the API (a client's own method names are not kept: there is no end to them).
func (m *Metrics) collectors(k routeKey) routeCollectors {
	if routes := m.routes.Load(); routes != nil {
		if rc, ok := (*routes)[k]; ok {
			return rc
		}
	}
	rc := routeCollectors{
		requests: m.requests.WithLabelValues(k.method, k.route, strconv.Itoa(k.status)),
		latency:  m.latency.WithLabelValues(k.method, k.route),
	}
	switch k.method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		m.routesMu.Lock()
		defer m.routesMu.Unlock()
		var old map[routeKey]routeCollectors
		if p := m.routes.Load(); p != nil {
			old = *p
		}
		if _, ok := old[k]; !ok && len(old) < maxRouteCollectors {
			routes := make(map[routeKey]routeCollectors, len(old)+1)
			maps.Copy(routes, old)
			routes[k] = rc
			m.routes.Store(&routes)
		}
	}
	return rc
}

// NewMetrics creates a registry with the Go and process collectors and the HTTP metrics.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jetgraph_http_requests_total", Help: "HTTP requests answered, by method, route and status.",
		}, []string{"method", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "jetgraph_http_request_duration_seconds", Help: "Time to answer an HTTP request, by method and route.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"method", "route"}),
	}
	reg.MustRegister(m.requests, m.latency, collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// observe counts the request c answered in took.
func (m *Metrics) observe(c echo.Context, took time.Duration) {
	route := c.Path()
	if route == "" {
		route = "unmatched"
	}
	rc := m.collectors(routeKey{c.Request().Method, route, c.Response().Status})
	rc.requests.Inc()
	rc.latency.Observe(took.Seconds())
}

// serve answers GET /metrics in the Prometheus text format, or as JSON with ?format=json.
func (m *Metrics) serve(c echo.Context) error {
	if c.QueryParam("format") != "json" {
		promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}).ServeHTTP(c.Response(), c.Request())
		return nil
	}
	families, err := m.Registry.Gather()
	if err != nil {
		return err
	}
	out := make(map[string]any, len(families))
	for _, f := range families {
		samples := make([]map[string]any, 0, len(f.GetMetric()))
		for _, metric := range f.GetMetric() {
			samples = append(samples, sampleJSON(metric))
		}
		out[f.GetName()] = map[string]any{
			"help": f.GetHelp(), "type": f.GetType().String(), "metrics": samples,
		}
	}
	return c.JSON(http.StatusOK, out)
}

func sampleJSON(metric *dto.Metric) map[string]any {
	s := map[string]any{}
	labels := map[string]string{}
	for _, l := range metric.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	if len(labels) > 0 {
		s["labels"] = labels
	}
	switch {
	case metric.Counter != nil:
		s["value"] = metric.GetCounter().GetValue()
	case metric.Gauge != nil:
		s["value"] = metric.GetGauge().GetValue()
	case metric.Untyped != nil:
		s["value"] = metric.GetUntyped().GetValue()
	case metric.Histogram != nil:
		h := metric.GetHistogram()
		buckets := map[string]uint64{}
		for _, b := range h.GetBucket() {
			buckets[strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)] = b.GetCumulativeCount()
		}
		s["count"], s["sum"], s["buckets"] = h.GetSampleCount(), h.GetSampleSum(), buckets
	case metric.Summary != nil:
		sm := metric.GetSummary()
		s["count"], s["sum"] = sm.GetSampleCount(), sm.GetSampleSum()
	}
	return s
}
