package httpapi

import (
	"net/http"
	"strconv"
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

func (m *Metrics) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		method := c.Request().Method
		m.requests.WithLabelValues(method, route, strconv.Itoa(c.Response().Status)).Inc()
		m.latency.WithLabelValues(method, route).Observe(time.Since(start).Seconds())
		return nil
	}
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
