package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// hostileCase is one request of the probe in testdata/hostile.json and the status it must get.
type hostileCase struct {
	Name, Method, Path, Body string
	BodyB64                  string `json:"body_b64"`
	ContentType              string `json:"content_type"`
	Pad                      int    // "{pad}" in body stands for that many x
	Batch                    int    // a /runs/batch body of that many runs
	RunIDs                   int    `json:"run_ids"` // a /runs/cancel body with that many run ids
	Status                   int
	Contains                 string // in the answer's body
}

// body builds the request body the case describes.
func (c hostileCase) body(t *testing.T) string {
	switch {
	case c.BodyB64 != "":
		raw, err := base64.StdEncoding.DecodeString(c.BodyB64)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	case c.Batch > 0:
		return "[" + strings.TrimSuffix(strings.Repeat(`{"assistant_id":"echo"},`, c.Batch), ",") + "]"
	case c.RunIDs > 0:
		ids := make([]string, c.RunIDs)
		for i := range ids {
			ids[i] = uuid.NewString()
		}
		raw, _ := json.Marshal(map[string]any{"run_ids": ids})
		return string(raw)
	}
	return strings.ReplaceAll(c.Body, "{pad}", strings.Repeat("x", c.Pad))
}

// TestHostileRequests replays the probe's hostile requests: each is refused with the status the
// table gives (naming the limit it hits) before anything is appended, and the server stays
// healthy (no projection refused anything).
func TestHostileRequests(t *testing.T) {
	raw, err := os.ReadFile("testdata/hostile.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []hostileCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	s := startRunStack(t, nil)
	thread := s.newThread(t)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			req, err := http.NewRequest(c.Method, s.URL+strings.ReplaceAll(c.Path, "{thread}", thread), strings.NewReader(c.body(t)))
			if err != nil {
				t.Fatal(err)
			}
			if c.ContentType != "" {
				req.Header.Set("Content-Type", c.ContentType)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			if resp.StatusCode != c.Status || !strings.Contains(string(body), c.Contains) {
				t.Fatalf("%s %s: %d %.300s; want %d with %q", c.Method, c.Path, resp.StatusCode, body, c.Status, c.Contains)
			}
		})
	}
	if code, _, body := s.call(t, "GET", "/ok", ""); code != 200 {
		t.Fatalf("/ok after the probe: %d %v", code, body)
	}
}
