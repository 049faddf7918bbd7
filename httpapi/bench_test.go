package httpapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkCreateThread measures POST /threads over real HTTP on loopback, end to end: validation,
// the append to the embedded log, and the wait until the local projection has applied it.
func BenchmarkCreateThread(b *testing.B) {
	s := startStack(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		resp, err := client.Post(s.URL+"/threads", "application/json", strings.NewReader(`{"metadata":{"user":"bench"}}`))
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
