package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/httpapi"
)

// TestErrorKindsMapToStatuses checks the one error mapping, kind by kind, through GET /ok: a
// failed health check is answered as any failed request is, with the status of its kind and
// {"detail": ...}.
func TestErrorKindsMapToStatuses(t *testing.T) {
	tests := []struct {
		kind engine.Kind
		want int
	}{
		{engine.Other, http.StatusInternalServerError},
		{engine.Invalid, http.StatusUnprocessableEntity},
		{engine.NotFound, http.StatusNotFound},
		{engine.Exists, http.StatusConflict},
		{engine.Conflict, http.StatusConflict},
		{engine.TooLarge, http.StatusRequestEntityTooLarge},
		{engine.Unavailable, http.StatusServiceUnavailable},
		{engine.BadRequest, http.StatusBadRequest},
		{engine.Unauthorized, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.kind.String(), func(t *testing.T) {
			health := func(context.Context) error {
				return engine.E(engine.Op("health"), tt.kind, "the reason", io.ErrUnexpectedEOF)
			}
			// A recorder, not a served exchange: most of these kinds cannot come from /ok in
			// the product, so the OpenAPI contract check would rightly refuse them.
			srv := httpapi.New(httpapi.Deps{Health: health, Logger: slog.New(slog.DiscardHandler)})
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/ok", nil))
			resp := rec.Result()
			var body map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.want || body["detail"] != "the reason" || len(body) != 1 {
				t.Errorf("/ok failing with kind %v: %d %v, want %d {\"detail\": \"the reason\"}", tt.kind, resp.StatusCode, body, tt.want)
			}
		})
	}
}
