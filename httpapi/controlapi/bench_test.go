package controlapi_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/engine/controlplane/keys"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/httpapi/controlapi"
	"github.com/jetgraph/jetgraph/projections/deployments/deploymentstest"
)

// BenchmarkListDeployments1000 lists a tenant's deployments, 1,000 of them, with filters,
// over HTTP, and reports the p50 and p99 of a request.
func BenchmarkListDeployments1000(b *testing.B) {
	l := eventlogtest.Open(b)
	view, proj := deploymentstest.Open(b, l)
	ks := keys.New(l, proj, view)
	key, rec, err := ks.Create(context.Background(), "bench", false, "")
	if err != nil {
		b.Fatal(err)
	}
	svc := controlplane.NewService(l, proj, view, nil, nil)
	ctx := engine.WithTenant(context.Background(), rec.TenantID)
	for i := range 1000 {
		typ := []string{"dev", "prod"}[i%2]
		_, err := svc.CreateDeployment(ctx, map[string]any{"name": fmt.Sprintf("app-%04d", i), "source": "git_host",
			"source_config":          map[string]any{"repo_url": "/repo", "deployment_type": typ},
			"source_revision_config": map[string]any{"repo_ref": "main"}, "secrets": []any{}})
		if err != nil {
			b.Fatal(err)
		}
	}
	srv := httpapi.New(httpapi.Deps{Logger: slog.New(slog.DiscardHandler), ControlPlane: controlapi.New(svc, ks, l, nil)})
	url := "/v2/deployments?name_contains=app-09&deployment_type=prod&status=AWAITING_DATABASE&limit=20"
	var took []time.Duration
	b.ResetTimer()
	for b.Loop() {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("X-Api-Key", key)
		w := &discard{header: http.Header{}}
		start := time.Now()
		srv.Handler().ServeHTTP(w, req)
		took = append(took, time.Since(start))
		if w.status != 0 && w.status != 200 {
			b.Fatalf("status %d", w.status)
		}
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
}

// discard is a ResponseWriter that keeps only the status.
type discard struct {
	header http.Header
	status int
}

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(s int)           { d.status = s }
