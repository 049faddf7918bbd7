package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/jetgraph/jetgraph/engine/embedding"
	"github.com/jetgraph/jetgraph/engine/store"
)

// storeOptions are the flags of the store's semantic index.
type storeOptions struct {
	embed  string // "local", "none" or "openai:<model>"
	dims   int
	fields string
	url    string
	keyEnv string
}

// addStoreFlags adds serve's flags of the store's semantic index.
func addStoreFlags(f *pflag.FlagSet, s *storeOptions) {
	f.Var(checked(&s.embed, "local", func(v string) error { _, _, err := parseEmbed(v); return err }), "store-embed",
		"embedding of the store's semantic search: 'local' (offline feature hashing), 'openai:<model>' (any OpenAI-compatible embeddings server) or 'none' (queries match text)")
	f.IntVar(&s.dims, "store-embed-dims", 0, fmt.Sprintf("size of the store's vectors (default: %d for local, the model's own for openai)", embedding.DefaultLocalDims))
	f.StringVar(&s.fields, "store-index-fields", "$", "paths of an item's value embedded when its put names none, comma-separated ('$': the whole value)")
	f.StringVar(&s.url, "store-embed-url", "", "base URL of the OpenAI-compatible embeddings server (default: $OPENAI_BASE_URL, else OpenAI's API)")
	f.StringVar(&s.keyEnv, "store-embed-key-env", "OPENAI_API_KEY", "environment variable holding the embeddings server's API key")
}

// parseEmbed splits --store-embed into its provider ("local", "none", "openai") and model.
func parseEmbed(v string) (provider, model string, err error) {
	provider, model, _ = strings.Cut(v, ":")
	switch {
	case (provider == "local" || provider == "none") && model == "":
		return provider, "", nil
	case provider == "openai" && strings.TrimSpace(model) != "":
		return provider, model, nil
	}
	return "", "", fmt.Errorf("%q: want local, none or openai:<model>", v)
}

// index is the store's semantic index the flags describe (nil with none).
func (s storeOptions) index() (*store.Index, error) {
	provider, model, err := parseEmbed(s.embed)
	if err != nil {
		return nil, fmt.Errorf("--store-embed %w", err)
	}
	if s.dims < 0 {
		return nil, fmt.Errorf("--store-embed-dims %d: must not be negative", s.dims)
	}
	var fields []string
	for _, p := range strings.Split(s.fields, ",") {
		if p = strings.TrimSpace(p); p != "" {
			fields = append(fields, p)
		}
	}
	switch provider {
	case "none":
		return nil, nil
	case "local":
		return &store.Index{Embedder: embedding.Local{Dims: s.dims}, Fields: fields}, nil
	}
	base := s.url
	if base == "" {
		base = os.Getenv("OPENAI_BASE_URL")
	}
	emb, err := embedding.NewOpenAI(embedding.OpenAIConfig{BaseURL: base, Model: model, APIKey: os.Getenv(s.keyEnv), Dims: s.dims})
	if err != nil {
		return nil, fmt.Errorf("--store-embed: %w", err)
	}
	return &store.Index{Embedder: emb, Fields: fields}, nil
}
