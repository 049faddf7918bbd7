package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/embedding"
	"github.com/jetgraph/jetgraph/engine/graphs"
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
	f.Var(checked(&s.embed, "", func(v string) error { _, _, err := parseEmbed(v); return err }), "store-embed",
		"embedding of the store's semantic search: 'local' (offline feature hashing), 'openai:<model>' (any OpenAI-compatible embeddings server) or 'none' (queries match text) (default: the --config file's store.index, else local)")
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

// index is the store's semantic index: the flags' when --store-embed is given, else the
// config's store.index (proj's, read from file), else local (nil with none). The embeddings
// server's URL and key come from the flags, else the config's env, else the process's.
func (s storeOptions) index(proj *graphs.Project, file string) (*store.Index, error) {
	getenv := os.Getenv
	if proj != nil && len(proj.Env) > 0 {
		getenv = func(k string) string {
			if v, ok := proj.Env[k]; ok {
				return v
			}
			return os.Getenv(k)
		}
	}
	if s.embed == "" && proj != nil && proj.StoreIndex != nil {
		ix := proj.StoreIndex
		idx, err := s.build(ix.Provider, ix.Model, ix.Dims, ix.Fields, getenv)
		if err != nil {
			reason := err.Error()
			var ee *engine.Error
			if errors.As(err, &ee) && ee.Detail != "" {
				reason = ee.Detail
			}
			return nil, &graphs.ConfigError{File: file, Key: "store.index", Reason: reason}
		}
		return idx, nil
	}
	embed := s.embed
	if embed == "" {
		embed = "local"
	}
	provider, model, err := parseEmbed(embed)
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
	if provider == "none" {
		return nil, nil
	}
	idx, err := s.build(provider, model, s.dims, fields, getenv)
	if err != nil {
		return nil, fmt.Errorf("--store-embed: %w", err)
	}
	return idx, nil
}

// build is the index of an embeddings provider ("local" or "openai") and model.
func (s storeOptions) build(provider, model string, dims int, fields []string, getenv func(string) string) (*store.Index, error) {
	if provider == graphs.EmbedLocal {
		return &store.Index{Embedder: embedding.Local{Dims: dims}, Fields: fields}, nil
	}
	base := s.url
	if base == "" {
		base = getenv("OPENAI_BASE_URL")
	}
	emb, err := embedding.NewOpenAI(embedding.OpenAIConfig{BaseURL: base, Model: model, APIKey: getenv(s.keyEnv), Dims: dims})
	if err != nil {
		return nil, err
	}
	return &store.Index{Embedder: emb, Fields: fields}, nil
}
