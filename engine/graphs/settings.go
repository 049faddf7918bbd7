package graphs

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine"
)

// Project is a graph.json read whole: its graphs, and what a langgraph.json says of the server
// that serves them.
type Project struct {
	Graphs *Registry
	// Env is the file's "env" (an object, or the variables of the .env file it names): the
	// environment of its hosted graphs and of the server's settings (an embeddings key), over
	// the process's.
	Env map[string]string
	// StoreIndex is "store.index": how the store embeds items for semantic search; nil when the
	// file has none.
	StoreIndex *StoreIndex
	// ThreadTTL is "checkpointer.ttl": the time to live of threads created without one; nil
	// when the file has none.
	ThreadTTL *ThreadTTL
	// HTTP is "http": the deployment's custom routes, route toggles, mount prefix and CORS;
	// nil when the file has none.
	HTTP *HTTPConfig
	// Auth is "auth": the user's own auth handler; nil when the file has none.
	Auth *AuthConfig
}

// Embedding providers a store.index may name.
const (
	EmbedOpenAI = "openai" // "openai:<model>": any server that speaks OpenAI's embeddings API
	EmbedLocal  = "local"  // jetgraph's offline feature hashing
)

// StoreIndex is langgraph.json's store.index: {"embed": "openai:text-embedding-3-small",
// "dims": 1536, "fields": ["$"]}.
type StoreIndex struct {
	Provider string   `json:"provider"` // EmbedOpenAI or EmbedLocal
	Model    string   `json:"model"`    // the provider's model ("" for local)
	Dims     int      `json:"dims"`     // 0: the model's own size
	Fields   []string `json:"fields"`
}

// ThreadTTL is langgraph.json's checkpointer.ttl: {"strategy": "delete", "default_ttl": 60,
// "sweep_interval_minutes": 10}.
type ThreadTTL struct {
	// Minutes is default_ttl: a thread created without a TTL is deleted this long after.
	Minutes float64 `json:"minutes"`
	// SweepInterval is how often expired threads are looked for (0: the server's default).
	SweepInterval time.Duration `json:"sweep_interval"`
}

// MaxEmbedDims bounds store.index.dims: the largest embedding models make 3072-dimensional
// vectors.
const MaxEmbedDims = 16384

// storeIndex reads store.index.
func (c *configParser) storeIndex(key string, raw json.RawMessage) (*StoreIndex, error) {
	kvs, err := c.object(key, raw)
	if err != nil {
		return nil, err
	}
	ix := &StoreIndex{}
	embed := ""
	for _, kv := range kvs {
		k := key + "." + kv.key
		switch kv.key {
		case "embed":
			if err := json.Unmarshal(kv.value, &embed); err != nil || strings.TrimSpace(embed) == "" {
				return nil, c.fail(k, "must be a non-empty string (openai:<model>, or local)")
			}
		case "dims":
			var f float64
			if err := json.Unmarshal(kv.value, &f); err != nil || f != math.Trunc(f) || f < 1 || f > MaxEmbedDims {
				return nil, c.fail(k, "must be a whole number from 1 to %d", MaxEmbedDims)
			}
			ix.Dims = int(f)
		case "fields":
			if err := json.Unmarshal(kv.value, &ix.Fields); err != nil {
				return nil, c.fail(k, "must be a list of paths of an item's value (\"$\": the whole value)")
			}
			for i, f := range ix.Fields {
				if strings.TrimSpace(f) == "" {
					return nil, c.fail(fmt.Sprintf("%s[%d]", k, i), "must be a path of an item's value, not empty")
				}
			}
		default:
			c.warn(k + ": unknown setting, ignored (known: embed, dims, fields)")
		}
	}
	if embed == "" {
		return nil, c.fail(key+".embed", "missing: name the embeddings (openai:<model>, or local)")
	}
	provider, model, _ := strings.Cut(strings.TrimSpace(embed), ":")
	switch {
	case provider == EmbedOpenAI && strings.TrimSpace(model) != "":
		ix.Provider, ix.Model = EmbedOpenAI, strings.TrimSpace(model)
	case provider == EmbedLocal && model == "":
		ix.Provider = EmbedLocal
	case strings.HasSuffix(provider, ".py") || strings.HasSuffix(provider, ".ts") || strings.HasSuffix(provider, ".js") || strings.ContainsAny(provider, "/\\"):
		return nil, c.fail(key+".embed", "%q: jetgraph does not run an embedding function of your code; it embeds with openai:<model> (any OpenAI-compatible server: OPENAI_BASE_URL) or local", embed)
	default:
		return nil, c.fail(key+".embed", "%q: jetgraph cannot serve the embeddings of %q; it embeds with openai:<model> (any OpenAI-compatible server: OPENAI_BASE_URL, such as Ollama's or vLLM's) or local", embed, provider)
	}
	return ix, nil
}

// store reads "store": its index; the keys jetgraph does not act on are warnings.
func (c *configParser) store(raw json.RawMessage) (*StoreIndex, error) {
	kvs, err := c.object("store", raw)
	if err != nil {
		return nil, err
	}
	var ix *StoreIndex
	for _, kv := range kvs {
		switch kv.key {
		case "index":
			if ix, err = c.storeIndex("store.index", kv.value); err != nil {
				return nil, err
			}
		case "ttl":
			c.warn("store.ttl: not acted on yet, ignored: items live as long as their put's ttl says")
		case "path":
			c.warn("store.path: jetgraph's store is its event log; a store of your code is not used, ignored")
		default:
			c.warn("store." + kv.key + ": unknown key, ignored (known: index, ttl, path)")
		}
	}
	return ix, nil
}

// ThreadTTLStrategies are the strategies checkpointer.ttl may name.
var ThreadTTLStrategies = []string{"delete"}

// checkpointer reads "checkpointer": its ttl; the keys jetgraph does not act on are warnings.
func (c *configParser) checkpointer(raw json.RawMessage) (*ThreadTTL, error) {
	kvs, err := c.object("checkpointer", raw)
	if err != nil {
		return nil, err
	}
	var ttl *ThreadTTL
	for _, kv := range kvs {
		switch kv.key {
		case "ttl":
			if ttl, err = c.threadTTL("checkpointer.ttl", kv.value); err != nil {
				return nil, err
			}
		default:
			c.warn("checkpointer." + kv.key + ": not acted on, ignored: jetgraph's checkpoints are events of its log")
		}
	}
	return ttl, nil
}

// threadTTL reads checkpointer.ttl.
func (c *configParser) threadTTL(key string, raw json.RawMessage) (*ThreadTTL, error) {
	kvs, err := c.object(key, raw)
	if err != nil {
		return nil, err
	}
	ttl := &ThreadTTL{}
	given := false
	for _, kv := range kvs {
		k := key + "." + kv.key
		switch kv.key {
		case "strategy":
			var s string
			if err := json.Unmarshal(kv.value, &s); err != nil {
				return nil, c.fail(k, "must be a string (known: %s)", strings.Join(ThreadTTLStrategies, ", "))
			}
			if s != "delete" {
				return nil, c.fail(k, "%q is not served by jetgraph (known: %s): an expired thread is deleted", s, strings.Join(ThreadTTLStrategies, ", "))
			}
		case "default_ttl":
			if string(kv.value) == "null" {
				continue
			}
			if err := json.Unmarshal(kv.value, &ttl.Minutes); err != nil || !(ttl.Minutes > 0) || ttl.Minutes > engine.MaxTTLMinutes {
				return nil, c.fail(k, "must be a number of minutes, over 0 and at most %d", engine.MaxTTLMinutes)
			}
			given = true
		case "sweep_interval_minutes":
			if string(kv.value) == "null" {
				continue
			}
			var f float64
			if err := json.Unmarshal(kv.value, &f); err != nil || !(f > 0) || f > 24*60 {
				return nil, c.fail(k, "must be a number of minutes, over 0 and at most 1440")
			}
			ttl.SweepInterval = time.Duration(f * float64(time.Minute))
		case "sweep_limit":
			c.warn(k + ": not acted on, ignored: every expired thread is deleted at each sweep")
		default:
			c.warn(k + ": unknown setting, ignored (known: strategy, default_ttl, sweep_interval_minutes)")
		}
	}
	if !given && ttl.SweepInterval == 0 {
		return nil, nil
	}
	return ttl, nil
}

// dependencies reads "dependencies": the local ones ("." or "./pkg", from the config's folder)
// are folders that must exist, returned absolute in file order; package names need nothing
// (the user's environment has them installed).
func (c *configParser) dependencies(raw json.RawMessage) ([]string, error) {
	var deps []string
	if err := json.Unmarshal(raw, &deps); err != nil {
		return nil, c.fail("dependencies", "must be a list of strings (local folders such as \".\" or \"./pkg\", or package names)")
	}
	var local []string
	for i, d := range deps {
		k := fmt.Sprintf("dependencies[%d]", i)
		if strings.TrimSpace(d) == "" {
			return nil, c.fail(k, "must not be empty")
		}
		if !strings.HasPrefix(d, ".") && !filepath.IsAbs(d) {
			continue // a package: installed in the user's environment
		}
		path := d
		if !filepath.IsAbs(path) {
			path = filepath.Join(c.root(), path)
		}
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			return nil, c.fail(k, "%q: no local dependency %s", d, path)
		case !fi.IsDir():
			return nil, c.fail(k, "%q: a local dependency must be a folder; %s is a file", d, path)
		}
		local = append(local, path)
	}
	return local, nil
}

// root is the config file's folder, absolute: relative paths of the file start there.
func (c *configParser) root() string {
	root := filepath.Dir(c.file)
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	return root
}
