package a2a_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkMessageSendEcho measures A2A message/send on the echo graph over HTTP, real
// JetStream and bbolt: one client, a new context (thread) per message, waiting for the completed
// task each time. It reports the latency's p50 and p99.
//
//	go test ./httpapi/a2a -run '^$' -bench MessageSendEcho -benchtime 2000x
func BenchmarkMessageSendEcho(b *testing.B) {
	s := start(b, nil)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i, "method": "message/send",
			"params": msg(fmt.Sprint("bench-", i), nil, text("hello"))})
		t0 := time.Now()
		res, err := client.Post(s.URL+"/a2a/echo", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		lat = append(lat, time.Since(t0))
		if res.StatusCode != 200 || !strings.Contains(string(raw), `"state":"completed"`) {
			b.Fatalf("status %d: %s", res.StatusCode, raw)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
