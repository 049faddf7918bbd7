package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/embedding"
	"github.com/jetgraph/jetgraph/engine/goldentest"
	"github.com/jetgraph/jetgraph/engine/store"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// memories are the items the semantic tests put, with their index setting.
var memories = []struct {
	key   string
	value map[string]any
	index any
}{
	{"pasta", map[string]any{"text": "I love Italian pasta with tomato sauce", "kind": "food"}, nil},
	{"pizza", map[string]any{"text": "Pizza margherita is my favourite dinner", "kind": "food"}, nil},
	{"hiking", map[string]any{"text": "Hiking in the mountains every weekend", "kind": "hobby"}, nil},
	{"piano", map[string]any{"text": "Playing the piano in the evening", "kind": "hobby"}, nil},
	{"cat", map[string]any{"text": "My cat sleeps on the piano", "kind": "pet"}, []any{"text"}},
	{"secret", map[string]any{"text": "Italian pasta recipe of my grandmother"}, false},
	{"title", map[string]any{"title": "Weekend mountains trip", "text": "unrelated body"}, []any{"title"}},
}

// putMemories puts every memory under ("mem",).
func putMemories(t *testing.T, svc *store.Service) {
	t.Helper()
	for _, m := range memories {
		if err := svc.Put(context.Background(), store.Put{Namespace: []string{"mem"}, Key: m.key, Value: m.value, Index: m.index}); err != nil {
			t.Fatalf("put %s: %v", m.key, err)
		}
	}
}

// ranking renders a search's results: key and score (4 decimals) per line.
func ranking(t *testing.T, svc *store.Service, q engine.StoreQuery) string {
	t.Helper()
	items, err := svc.Search(context.Background(), q, false)
	if err != nil {
		t.Fatalf("search %q: %v", q.Query, err)
	}
	var b strings.Builder
	for _, it := range items {
		if it.Score == nil {
			fmt.Fprintf(&b, "  %s -\n", it.Key)
		} else {
			fmt.Fprintf(&b, "  %s %.4f\n", it.Key, *it.Score)
		}
	}
	return b.String()
}

var semanticQueries = []engine.StoreQuery{
	{Query: "pasta dinner"},
	{Query: "mountain hike"},
	{Query: "piano music"},
	{Query: "food", Filter: map[string]any{"kind": "food"}},
	{Query: "cats and pianos", Limit: 2},
}

// TestSemanticSearchRanking ranks items by cosine similarity of the local embedding (golden):
// the configured fields by default, the item's own paths, none with index false (after the
// ranked ones, without a score); a second process, whose projection is built from the log
// alone, ranks exactly alike.
func TestSemanticSearchRanking(t *testing.T) {
	l := eventlogtest.Open(t)
	ix := &store.Index{Embedder: embedding.Local{Dims: 128}, Fields: []string{"text"}}
	live := open(t, l)
	live.svc.SetIndex(ix)
	putMemories(t, live.svc)
	var b strings.Builder
	for _, q := range semanticQueries {
		fmt.Fprintf(&b, "%q filter=%v limit=%d\n%s", q.Query, q.Filter, q.Limit, ranking(t, live.svc, q))
	}
	goldentest.Check(t, filepath.Join("testdata", "semantic_ranking.golden"), []byte(b.String()))

	rebuilt := open(t, l)
	rebuilt.svc.SetIndex(ix)
	for _, q := range semanticQueries {
		if got, want := ranking(t, rebuilt.svc, q), ranking(t, live.svc, q); got != want {
			t.Errorf("%q: rebuilt from the log:\n%s\nlive:\n%s", q.Query, got, want)
		}
	}

	// Without an index, a query is lexical: only the items whose text contains it.
	lexical := open(t, l)
	if got := ranking(t, lexical.svc, engine.StoreQuery{Query: "piano"}); got != "  cat 1.0000\n  piano 1.0000\n" {
		t.Errorf("lexical ranking = %q", got)
	}
}

// embeddingsServer is an OpenAI-compatible embeddings endpoint (POST /v1/embeddings, the real
// wire format) computing its vectors with the local embedding; down makes it answer 503.
type embeddingsServer struct {
	*httptest.Server
	down     atomic.Bool
	requests atomic.Int32
	last     atomic.Value // the last request body, decoded
}

func startEmbeddingsServer(t *testing.T, key string) *embeddingsServer {
	s := &embeddingsServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost || r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		if s.down.Load() {
			http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
			return
		}
		var req struct {
			Input      []string `json:"input"`
			Model      string   `json:"model"`
			Dimensions int      `json:"dimensions"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.last.Store(req)
		vecs, _ := embedding.Local{Dims: req.Dimensions}.Embed(r.Context(), req.Input)
		data := make([]map[string]any, len(vecs))
		for i, v := range vecs {
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
			"usage": map[string]any{"prompt_tokens": len(req.Input), "total_tokens": len(req.Input)}})
	}))
	t.Cleanup(s.Close)
	return s
}

// TestOpenAIEmbeddings: items and queries embedded through an OpenAI-compatible server rank as
// the same vectors do locally; while the server is down a put is refused (Unavailable) before
// anything is appended, and a query fails alike; the projection never waits on it.
func TestOpenAIEmbeddings(t *testing.T) {
	srv := startEmbeddingsServer(t, "sk-test")
	emb, err := embedding.NewOpenAI(embedding.OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "text-embedding-3-small", APIKey: "sk-test", Dims: 128})
	if err != nil {
		t.Fatal(err)
	}
	l := eventlogtest.Open(t)
	remote := open(t, l)
	remote.svc.SetIndex(&store.Index{Embedder: emb, Fields: []string{"text"}})
	putMemories(t, remote.svc)
	if req, _ := srv.last.Load().(struct {
		Input      []string `json:"input"`
		Model      string   `json:"model"`
		Dimensions int      `json:"dimensions"`
	}); req.Model != "text-embedding-3-small" || req.Dimensions != 128 {
		t.Errorf("last request = %+v", req)
	}

	local := open(t, eventlogtest.Open(t))
	local.svc.SetIndex(&store.Index{Embedder: embedding.Local{Dims: 128}, Fields: []string{"text"}})
	putMemories(t, local.svc)
	for _, q := range semanticQueries {
		if got, want := ranking(t, remote.svc, q), ranking(t, local.svc, q); got != want {
			t.Errorf("%q through the server:\n%s\nlocally:\n%s", q.Query, got, want)
		}
	}

	srv.down.Store(true)
	ctx := context.Background()
	err = remote.svc.Put(ctx, store.Put{Namespace: []string{"mem"}, Key: "new", Value: map[string]any{"text": "x"}})
	if !engine.Is(engine.Unavailable, err) || strings.Contains(err.Error(), "sk-test") {
		t.Fatalf("put while the server is down: %v, want Unavailable without the key", err)
	}
	if _, ok, _ := remote.svc.Get(ctx, []string{"mem"}, "new", false); ok {
		t.Error("a put that could not be embedded was stored")
	}
	if _, err := remote.svc.Search(ctx, engine.StoreQuery{Query: "pasta"}, false); !engine.Is(engine.Unavailable, err) {
		t.Errorf("a query while the server is down: %v, want Unavailable", err)
	}
	// Reads without a query, and a projection rebuilt from the log, need no server.
	calls := srv.requests.Load()
	rebuilt := open(t, l)
	rebuilt.svc.SetIndex(&store.Index{Embedder: emb, Fields: []string{"text"}})
	if items, err := rebuilt.svc.Search(ctx, engine.StoreQuery{}, false); err != nil || len(items) != len(memories) {
		t.Errorf("rebuilt without the server: %d items, %v", len(items), err)
	}
	if srv.requests.Load() != calls {
		t.Error("rebuilding the projection called the embeddings server")
	}
	srv.down.Store(false)
	if got, want := ranking(t, rebuilt.svc, semanticQueries[0]), ranking(t, remote.svc, semanticQueries[0]); got != want || !reflect.DeepEqual(got, ranking(t, local.svc, semanticQueries[0])) {
		t.Errorf("rebuilt ranking:\n%s\nlive:\n%s", got, want)
	}
}
