// Package embedding turns texts into vectors for the store's semantic search: Local, a
// deterministic feature-hashing embedding that needs no network (the default, for tests and the
// demo), and OpenAI, any server speaking OpenAI's embeddings API. Both give L2-normalised vectors,
// so a dot product is their cosine similarity.
package embedding

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"unicode"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/model"
)

// DefaultLocalDims is the size of Local's vectors when none is configured.
const DefaultLocalDims = 256

// Local embeds texts by feature hashing: every lower-cased word and every character trigram of
// each word (padded with spaces, so that words sharing a stem share features) is hashed (FNV-1a)
// to a dimension and a sign, and the counts are L2-normalised. Texts that share words and word
// parts score high, which is enough for tests and a demo; it knows no synonyms.
type Local struct{ Dims int }

// Name identifies the embedding and its size: vectors of another name are not comparable.
func (l Local) Name() string { return fmt.Sprintf("local:%d", l.dims()) }

func (l Local) dims() int {
	if l.Dims <= 0 {
		return DefaultLocalDims
	}
	return l.Dims
}

// Embed implements the store's Embedder; it never fails.
func (l Local) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = l.vector(t)
	}
	return out, nil
}

// vector is the hashed, normalised feature vector of text.
func (l Local) vector(text string) []float32 {
	v := make([]float32, l.dims())
	add := func(feature string, weight float32) {
		h := fnv.New64a()
		h.Write([]byte(feature))
		sum := h.Sum64()
		i := int(sum % uint64(len(v)))
		if sum>>63 == 1 {
			weight = -weight
		}
		v[i] += weight
	}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		add("w:"+w, 1)
		padded := []rune(" " + w + " ")
		for j := 0; j+3 <= len(padded); j++ {
			add("c:"+string(padded[j:j+3]), 0.5)
		}
	}
	return Normalize(v)
}

// Normalize scales v to unit length in place (a zero vector stays zero) and returns it.
func Normalize(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return v
	}
	n := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= n
	}
	return v
}

// OpenAIConfig says which OpenAI-compatible embeddings server to call, as model.Config does for
// chat models: BaseURL "" is OpenAI's API; the key comes from the environment (the caller reads
// it), never from a file.
type OpenAIConfig struct {
	BaseURL string
	Model   string
	APIKey  string
	// Dims, when above 0, asks the server for vectors of that size (the "dimensions" parameter).
	Dims int
}

const openAIOp = engine.Op("embedding.openai")

// OpenAI embeds through an OpenAI-compatible embeddings endpoint (POST {base}/embeddings).
type OpenAI struct {
	svc    openai.EmbeddingService
	cfg    OpenAIConfig
	server string // the base URL without credentials, named in errors
}

// NewOpenAI returns the embedder cfg describes; it fails with kind Invalid on a missing model,
// a malformed base URL, or no key for OpenAI's own API.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, engine.E(openAIOp, engine.Invalid, "no embedding model is configured")
	}
	opts, server, err := model.ServerOptions(openAIOp, cfg.BaseURL, cfg.APIKey)
	if err != nil {
		return nil, err
	}
	opts = append(opts, option.WithMaxRetries(2))
	return &OpenAI{svc: openai.NewEmbeddingService(opts...), cfg: cfg, server: server}, nil
}

// Name identifies the model and size: "openai:<model>[:<dims>]".
func (o *OpenAI) Name() string {
	if o.cfg.Dims > 0 {
		return fmt.Sprintf("openai:%s:%d", o.cfg.Model, o.cfg.Dims)
	}
	return "openai:" + o.cfg.Model
}

// Embed asks the server for the vectors of texts, in one request. A server that fails or does
// not answer is an Unavailable error naming it (without its credentials or the key).
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	p := openai.EmbeddingNewParams{
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		Model:          openai.EmbeddingModel(o.cfg.Model),
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	}
	if o.cfg.Dims > 0 {
		p.Dimensions = openai.Int(int64(o.cfg.Dims))
	}
	res, err := o.svc.New(ctx, p)
	if err != nil {
		msg := err.Error()
		if o.cfg.APIKey != "" {
			msg = strings.ReplaceAll(msg, o.cfg.APIKey, "***")
		}
		return nil, engine.E(openAIOp, engine.Unavailable, fmt.Sprintf("the embeddings server %s failed: %s", o.server, msg))
	}
	if len(res.Data) != len(texts) {
		return nil, engine.E(openAIOp, engine.Unavailable,
			fmt.Sprintf("the embeddings server %s answered %d vectors for %d texts", o.server, len(res.Data), len(texts)))
	}
	out := make([][]float32, len(texts))
	for _, d := range res.Data {
		if d.Index < 0 || int(d.Index) >= len(out) || out[d.Index] != nil {
			return nil, engine.E(openAIOp, engine.Unavailable, fmt.Sprintf("the embeddings server %s answered a bad index %d", o.server, d.Index))
		}
		v := make([]float32, len(d.Embedding))
		for i, x := range d.Embedding {
			v[i] = float32(x)
		}
		out[d.Index] = Normalize(v)
	}
	return out, nil
}
