package runner

import (
	"maps"
	"strings"
)

// reservedMetadata are run metadata keys the server sets itself; a request's values for them are
// dropped silently, as on the reference servers.
var reservedMetadata = map[string]bool{
	"run_id": true, "thread_id": true, "graph_id": true, "assistant_id": true, "user_id": true,
	"checkpoint_id": true, "checkpoint_ns": true, "langgraph_auth_user": true, "langgraph_auth_user_id": true,
}

// secret reports whether a config or metadata key must never be stored or propagated: API keys
// and authentication values.
func secret(key string) bool {
	k := strings.ToLower(key)
	return k == "x-api-key" || k == "authorization" || strings.HasPrefix(k, "auth_") || strings.HasPrefix(k, "langgraph_auth")
}

// withoutSecrets returns m without secret keys.
func withoutSecrets(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !secret(k) {
			out[k] = v
		}
	}
	return out
}

// mergeConfig merges run configs in order (assistant, thread, request): configurable values and
// other keys of later configs win; tags are concatenated.
func mergeConfig(layers ...map[string]any) map[string]any {
	out := map[string]any{}
	configurable := map[string]any{}
	var tags []any
	for _, l := range layers {
		for k, v := range l {
			switch k {
			case "configurable":
				if m, ok := v.(map[string]any); ok {
					maps.Copy(configurable, m)
				}
			case "tags":
				if ts, ok := v.([]any); ok {
					tags = append(tags, ts...)
				}
			default:
				out[k] = v
			}
		}
	}
	out["configurable"] = withoutSecrets(configurable)
	if tags != nil {
		out["tags"] = tags
	}
	return out
}

// BaseConfig is the config a run's request is layered over: the assistant's and the thread's
// merged as a run merges them. A run request's masked placeholders keep the secrets stored there.
func BaseConfig(assistant, thread map[string]any) map[string]any {
	return mergeConfig(assistant, thread)
}

// runKeys are the configurable keys that belong to one run, not to its thread: the server sets
// them on every run (reservedMetadata) or they name where the run starts.
var runKeys = map[string]bool{"checkpoint_map": true}

// ThreadConfig is the config a thread keeps once a run is created on it, as the reference servers
// keep it: the assistant's, the thread's and the request's config merged in that order (later keys
// win, configurable merged key by key), without the keys of one run or secrets. Graphs built for
// the thread's state (a state update with as_node, a read) are built from it, so a graph factory
// gives them the nodes the thread's runs had. nil when it has nothing.
func ThreadConfig(assistant, thread, request map[string]any) map[string]any {
	out := map[string]any{}
	configurable := map[string]any{}
	for _, l := range []map[string]any{assistant, thread, request} {
		for k, v := range l {
			if k != "configurable" {
				out[k] = v
				continue
			}
			if m, ok := v.(map[string]any); ok {
				for ck, cv := range m {
					if !reservedMetadata[ck] && !runKeys[ck] && !secret(ck) {
						configurable[ck] = cv
					}
				}
			}
		}
	}
	if len(configurable) > 0 {
		out["configurable"] = configurable
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// mergeMetadata merges metadata layers (assistant, thread) with the request's, from which the
// reserved keys are dropped; secrets never pass.
func mergeMetadata(assistant, thread, request map[string]any) map[string]any {
	out := map[string]any{}
	maps.Copy(out, assistant)
	maps.Copy(out, thread)
	for k, v := range request {
		if !reservedMetadata[k] {
			out[k] = v
		}
	}
	return withoutSecrets(out)
}

// mergeContext is the runtime context: request over assistant over the graph's defaults.
func mergeContext(defaults, assistant, request map[string]any) map[string]any {
	out := map[string]any{}
	maps.Copy(out, defaults)
	maps.Copy(out, assistant)
	maps.Copy(out, request)
	return out
}
