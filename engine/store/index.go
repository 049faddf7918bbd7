package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jetgraph/jetgraph/engine"
)

// MaxEmbedTextBytes bounds the text of one indexed field sent to the embedder: a longer text is
// cut there (embedding models read a few thousand tokens at most).
const MaxEmbedTextBytes = 32 << 10

// Embedder turns texts into unit vectors (engine/embedding's Local and OpenAI are ones). Name
// identifies the model and size: only vectors of the same name are compared.
type Embedder interface {
	Name() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Index is the store's semantic index, as langgraph.json's store.index: the embedder, and the
// fields embedded when a put does not name its own (paths as engine.ValueAt reads them; none:
// the whole value, "$").
//
// Items are embedded when their put is accepted, and the vectors travel in the put event: they
// are log data, not derived by a projection. So a rebuild replays them without calling the
// embeddings server, a projection never waits on (nor skips an event for) a server that is
// down, and a put that cannot be embedded is refused (503) before anything is appended. A
// query is embedded when it is asked; a store search with a query fails the same way while the
// server is down. Changing the embedder leaves the items put before under the old name: they
// rank after the others, without a score, until they are put again.
type Index struct {
	Embedder Embedder
	Fields   []string
}

// SetIndex gives the service a semantic index (nil: none, queries are lexical).
func (s *Service) SetIndex(ix *Index) { s.index = ix }

// embedItem returns the embedding name and vectors of a put: for index nil the configured
// fields, for a list of paths those, for false nothing. Paths leading nowhere embed nothing.
func (s *Service) embedItem(ctx context.Context, op string, value map[string]any, index any) (string, []engine.StoreVector, error) {
	if s.index == nil || s.index.Embedder == nil {
		return "", nil, nil
	}
	var paths []string
	switch ix := index.(type) {
	case nil:
		paths = s.index.Fields
		if len(paths) == 0 {
			paths = []string{"$"}
		}
	case bool:
		if !ix {
			return "", nil, nil
		}
		paths = []string{"$"}
	case []string:
		paths = ix
	case []any:
		for _, p := range ix {
			if path, ok := p.(string); ok {
				paths = append(paths, path)
			}
		}
	}
	var texts, found []string
	for _, p := range paths {
		v, ok := engine.ValueAt(value, p)
		if !ok {
			continue
		}
		texts = append(texts, embedText(v))
		found = append(found, p)
	}
	if len(texts) == 0 {
		return "", nil, nil
	}
	vecs, err := s.index.Embedder.Embed(ctx, texts)
	if err != nil {
		return "", nil, engine.E(engine.Op(op), err)
	}
	out := make([]engine.StoreVector, len(vecs))
	for i, v := range vecs {
		out[i] = engine.StoreVector{Path: found[i], Vector: engine.PackVector(v)}
	}
	return s.index.Embedder.Name(), out, nil
}

// embedText is the text of a value as it is embedded: a string as it is, anything else as JSON,
// cut at MaxEmbedTextBytes (on a rune boundary).
func embedText(v any) string {
	text, ok := v.(string)
	if !ok {
		raw, _ := json.Marshal(v)
		text = string(raw)
	}
	if len(text) > MaxEmbedTextBytes {
		cut := MaxEmbedTextBytes
		for cut > 0 && text[cut]&0xC0 == 0x80 {
			cut--
		}
		text = text[:cut]
	}
	return text
}

// embedQuery sets q's vector when the service has a semantic index and q a query.
func (s *Service) embedQuery(ctx context.Context, op string, q *engine.StoreQuery) error {
	if s.index == nil || s.index.Embedder == nil || q.Query == "" {
		return nil
	}
	vecs, err := s.index.Embedder.Embed(ctx, []string{q.Query})
	if err != nil {
		return engine.E(engine.Op(op), err)
	}
	if len(vecs) != 1 {
		return engine.E(engine.Op(op), engine.Unavailable, fmt.Sprintf("the embedder answered %d vectors for one query", len(vecs)))
	}
	q.Vector, q.Embedding = vecs[0], s.index.Embedder.Name()
	return nil
}
