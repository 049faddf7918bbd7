package model

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/jetgraph/jetgraph/engine"
)

// DefaultOpenAIModel is the model ConfigFromEnv picks when the environment names none.
const DefaultOpenAIModel = "gpt-4o-mini"

const openAIOp = engine.Op("model.openai")

// openAIBaseURL is the root of OpenAI's own API, named in errors when Config.BaseURL is empty.
const openAIBaseURL = "https://api.openai.com/v1"

// Config configures an OpenAI model.
type Config struct {
	// BaseURL is the API's root, up to but not including "/chat/completions"
	// ("http://localhost:11434/v1"); empty means OpenAI's own API.
	BaseURL string
	// APIKey is sent as a bearer token. It may be empty for a server that wants none, but not
	// for OpenAI's own API. It never appears in errors.
	APIKey string
	// Model is the model name the server knows ("gpt-4o-mini"); required.
	Model string
	// Temperature is the default sampling temperature; nil leaves the server's default.
	Temperature *float64
	// HTTPClient makes the requests; nil means http.DefaultClient. Bound a call with its context.
	HTTPClient *http.Client
	// MaxRetries is how many times a failed request (connection error, 408, 409, 429, 5xx) is
	// retried; nil means the client library's default (2).
	MaxRetries *int
}

// ConfigFromEnv reads a Config from the environment through getenv (os.Getenv in production):
// OPENAI_API_KEY, OPENAI_BASE_URL, and the model from JETGRAPH_MODEL, else OPENAI_MODEL, else
// DefaultOpenAIModel.
func ConfigFromEnv(getenv func(string) string) Config {
	cfg := Config{
		APIKey:  strings.TrimSpace(getenv("OPENAI_API_KEY")),
		BaseURL: strings.TrimSpace(getenv("OPENAI_BASE_URL")),
		Model:   strings.TrimSpace(getenv("JETGRAPH_MODEL")),
	}
	if cfg.Model == "" {
		cfg.Model = strings.TrimSpace(getenv("OPENAI_MODEL"))
	}
	if cfg.Model == "" {
		cfg.Model = DefaultOpenAIModel
	}
	return cfg
}

// OpenAI is a ChatModel served through the chat completions API, by OpenAI or by any server
// that speaks it (vLLM, Ollama, llama.cpp, LiteLLM, ...). It always streams, asking for usage in
// the last event. It is safe for concurrent use.
type OpenAI struct {
	svc         openai.ChatCompletionService
	model       string
	temperature *float64
	apiKey      string // only to scrub it from error text
	server      string // the base URL without credentials, named in errors
}

// NewOpenAI returns a model that calls the server cfg describes. It reads no environment
// variable itself: use ConfigFromEnv for that. It fails with kind Invalid when cfg lacks a model,
// has a malformed base URL, or lacks an API key for OpenAI's own API.
func NewOpenAI(cfg Config) (*OpenAI, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, engine.E(openAIOp, engine.Invalid, "no model name is configured")
	}
	opts, server, err := ServerOptions(openAIOp, cfg.BaseURL, cfg.APIKey)
	if err != nil {
		return nil, err
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	if cfg.MaxRetries != nil {
		if *cfg.MaxRetries < 0 {
			return nil, engine.E(openAIOp, engine.Invalid, "max retries must not be negative")
		}
		opts = append(opts, option.WithMaxRetries(*cfg.MaxRetries))
	}
	return &OpenAI{
		svc:         openai.NewChatCompletionService(opts...),
		model:       cfg.Model,
		temperature: cfg.Temperature,
		apiKey:      cfg.APIKey,
		server:      server,
	}, nil
}

// ServerOptions are the client options of an OpenAI-compatible server at baseURL ("": OpenAI's
// API, which needs apiKey) and the server's URL without credentials, to name it in errors. The
// chat models and the store's embeddings (engine/embedding) reach their servers alike. A
// malformed URL, or no key for OpenAI's API, is an Invalid error of op.
func ServerOptions(op engine.Op, baseURL, apiKey string) ([]option.RequestOption, string, error) {
	opts := []option.RequestOption{}
	server := openAIBaseURL
	if baseURL == "" {
		if apiKey == "" {
			return nil, "", engine.E(op, engine.Invalid, "no API key is configured for the OpenAI API (set OPENAI_API_KEY)")
		}
		opts = append(opts, option.WithEnvironmentProduction())
	} else {
		u, err := url.Parse(baseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, "", engine.E(op, engine.Invalid, "the base URL must be an http or https URL")
		}
		opts = append(opts, option.WithBaseURL(baseURL))
		server = withoutCredentials(u)
	}
	if apiKey != "" {
		opts = append(opts, option.WithAPIKey(apiKey))
	}
	return opts, server, nil
}

// Info reports provider "openai" and the configured model name.
func (o *OpenAI) Info() Info { return Info{Provider: "openai", Model: o.model} }

// Stream calls the chat completions API with stream: true and turns its events into chunks: a
// chunk per event that adds content or tool call pieces, a chunk with finish_reason and
// model_name in its response_metadata, and a chunk with the usage. Errors are engine errors of
// kind Invalid for a 4xx answer other than 408 and 429 (the request or the key is wrong) and
// Unavailable for 408, 429, 5xx, connection failures and broken streams.
func (o *OpenAI) Stream(ctx context.Context, req Request, onChunk func(engine.MessageChunk) error) (engine.Message, error) {
	params, err := o.params(req)
	if err != nil {
		return engine.Message{}, err
	}
	stream := o.svc.NewStreaming(ctx, params)
	defer func() { _ = stream.Close() }()
	acc := &accumulator{calls: map[int]*partialCall{}}
	for stream.Next() {
		c, ok := acc.add(stream.Current())
		if ok && onChunk != nil {
			if err := onChunk(c); err != nil {
				return engine.Message{}, err
			}
		}
	}
	if err := stream.Err(); err != nil {
		return engine.Message{}, o.fail(ctx, err)
	}
	if acc.id == "" {
		return engine.Message{}, engine.E(openAIOp, engine.Unavailable, "the model server sent an empty stream")
	}
	return acc.message(), nil
}

// params builds the API request for req.
func (o *OpenAI) params(req Request) (openai.ChatCompletionNewParams, error) {
	msgs, err := toOpenAIMessages(req.Messages)
	if err != nil {
		return openai.ChatCompletionNewParams{}, err
	}
	p := openai.ChatCompletionNewParams{
		Model:         o.model,
		Messages:      msgs,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	if t := req.Temperature; t != nil {
		p.Temperature = param.NewOpt(*t)
	} else if t := o.temperature; t != nil {
		p.Temperature = param.NewOpt(*t)
	}
	if req.MaxTokens > 0 {
		p.MaxCompletionTokens = param.NewOpt(int64(req.MaxTokens))
	}
	if len(req.Stop) > 0 {
		p.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: req.Stop}
	}
	p.Tools = toOpenAITools(req.Tools)
	switch req.ToolChoice {
	case "":
	case "auto", "none", "required":
		p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: param.NewOpt(req.ToolChoice)}
	default:
		p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfFunctionToolChoice: &openai.ChatCompletionNamedToolChoiceParam{
			Function: openai.ChatCompletionNamedToolChoiceFunctionParam{Name: req.ToolChoice},
		}}
	}
	return p, nil
}

// fail turns an error of the client library into an engine error that names the server's URL,
// keeping the API key out of its text.
func (o *OpenAI) fail(ctx context.Context, err error) error {
	var apiErr *openai.Error
	var streamErr *ssestream.StreamError
	switch {
	case errors.As(err, &apiErr):
		code := apiErr.StatusCode
		kind := engine.Other
		switch {
		case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500:
			kind = engine.Unavailable
		case code >= 400:
			kind = engine.Invalid
		}
		detail := strings.TrimSpace(fmt.Sprintf("the model server at %s answered %d %s", o.server, code, http.StatusText(code)))
		if msg := strings.TrimSpace(apiErr.Message); msg != "" {
			detail += ": " + msg
		}
		// The library's error holds the request, Authorization header included: keep only text.
		return engine.E(openAIOp, kind, o.scrub(detail))
	case ctx.Err() != nil:
		kind := engine.Other
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			kind = engine.Unavailable
		}
		return engine.E(openAIOp, kind, "the model call was canceled", ctx.Err())
	case errors.As(err, &streamErr):
		return engine.E(openAIOp, engine.Unavailable, o.scrub("the model server at "+o.server+" failed mid-stream: "+streamErr.Message))
	}
	return engine.E(openAIOp, engine.Unavailable, "the model server at "+o.server+" could not be reached or sent a broken stream",
		errors.New(o.scrub(err.Error())))
}

// scrub removes the API key from s, and the credentials of the URLs in it.
func (o *OpenAI) scrub(s string) string {
	s = engine.MaskURLs(s)
	if len(o.apiKey) < 4 {
		return s
	}
	return strings.ReplaceAll(s, o.apiKey, "[redacted]")
}

// withoutCredentials is u without its user info, query and fragment: where a credential could
// be, and nothing that says which server it is.
func withoutCredentials(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = nil, "", false, "", ""
	return c.String()
}

// partialCall is a tool call being streamed.
type partialCall struct {
	index    int
	id, name string
	args     strings.Builder
}

// accumulator folds a stream of completion chunks into one message.
type accumulator struct {
	id, model, finish string
	text, refusal     strings.Builder
	calls             map[int]*partialCall
	order             []int
	usage             *engine.UsageMetadata
}

// add folds c in and returns the message chunk it makes, if it says anything.
func (a *accumulator) add(c openai.ChatCompletionChunk) (engine.MessageChunk, bool) {
	if a.id == "" {
		a.id = c.ID
		if a.id == "" {
			a.id = "run-" + uuid.NewString() // a server that names no completion
		}
	}
	if c.Model != "" {
		a.model = c.Model
	}
	out := newChunk(a.id)
	said := false
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // only one choice is asked for
		}
		d := ch.Delta
		if d.Content != "" {
			out.Content += d.Content
			a.text.WriteString(d.Content)
			said = true
		}
		if d.Refusal != "" {
			out.AdditionalKwargs["refusal"] = d.Refusal
			a.refusal.WriteString(d.Refusal)
			said = true
		}
		for _, tc := range d.ToolCalls {
			idx := int(tc.Index)
			p := a.calls[idx]
			if p == nil {
				p = &partialCall{index: idx}
				a.calls[idx] = p
				a.order = append(a.order, idx)
			}
			if tc.ID != "" {
				p.id = tc.ID
			}
			if n := tc.Function.Name; n != "" {
				if p.name == "" || strings.HasPrefix(n, p.name) {
					p.name = n // sent once, or resent whole
				} else {
					p.name += n // sent in pieces
				}
			}
			p.args.WriteString(tc.Function.Arguments)
			out.ToolCallChunks = append(out.ToolCallChunks, engine.ToolCallChunk{
				Name: tc.Function.Name, Args: tc.Function.Arguments, ID: tc.ID, Index: idx, Type: "tool_call_chunk",
			})
			said = true
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
			out.ResponseMetadata["finish_reason"] = ch.FinishReason
			out.ResponseMetadata["model_name"] = a.model
			said = true
		}
	}
	if c.JSON.Usage.Valid() {
		a.usage = usageOf(c.Usage)
		out.UsageMetadata = copyUsage(a.usage)
		said = true
	}
	return out, said
}

// message is the complete AI message the stream made.
func (a *accumulator) message() engine.Message {
	m := newAIMessage(a.id, a.text.String())
	if r := a.refusal.String(); r != "" {
		m.AdditionalKwargs["refusal"] = r
	}
	for _, idx := range a.order {
		p := a.calls[idx]
		id := p.id
		if id == "" {
			id = fmt.Sprintf("call_%s_%d", a.id, idx)
		}
		raw := p.args.String()
		args, err := parseArgs(raw)
		if err != nil {
			m.InvalidToolCalls = append(m.InvalidToolCalls, invalidToolCall(p.name, raw, id, err.Error()))
			continue
		}
		m.ToolCalls = append(m.ToolCalls, engine.ToolCall{Name: p.name, Args: args, ID: id, Type: "tool_call"})
	}
	m.UsageMetadata = copyUsage(a.usage)
	m.ResponseMetadata["model_provider"] = "openai"
	if a.model != "" {
		m.ResponseMetadata["model_name"] = a.model
	}
	if a.finish != "" {
		m.ResponseMetadata["finish_reason"] = a.finish
	}
	return m
}

// usageOf maps the API's token counts to LangChain's, with the details the server reported.
func usageOf(u openai.CompletionUsage) *engine.UsageMetadata {
	m := &engine.UsageMetadata{
		InputTokens:  int(u.PromptTokens),
		OutputTokens: int(u.CompletionTokens),
		TotalTokens:  int(u.TotalTokens),
	}
	if m.TotalTokens == 0 {
		m.TotalTokens = m.InputTokens + m.OutputTokens
	}
	in := map[string]int{}
	if pd := u.PromptTokensDetails; u.JSON.PromptTokensDetails.Valid() {
		if pd.JSON.AudioTokens.Valid() {
			in["audio"] = int(pd.AudioTokens)
		}
		if pd.JSON.CachedTokens.Valid() {
			in["cache_read"] = int(pd.CachedTokens)
		}
		if pd.JSON.CacheWriteTokens.Valid() {
			in["cache_creation"] = int(pd.CacheWriteTokens)
		}
	}
	out := map[string]int{}
	if cd := u.CompletionTokensDetails; u.JSON.CompletionTokensDetails.Valid() {
		if cd.JSON.AudioTokens.Valid() {
			out["audio"] = int(cd.AudioTokens)
		}
		if cd.JSON.ReasoningTokens.Valid() {
			out["reasoning"] = int(cd.ReasoningTokens)
		}
	}
	if len(in) > 0 {
		m.InputTokenDetails = in
	}
	if len(out) > 0 {
		m.OutputTokenDetails = out
	}
	return m
}
