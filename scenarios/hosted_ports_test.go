package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine/goldentest"
)

// hostedPortsConfig is one langgraph.json that serves jetgraph's Go example graphs
// (engine/graphs/examples*.go) under their ids beside their ports to Python and TypeScript
// (scenarios/hosted/ports), under py_<id> and ts_<id>.
const hostedPortsConfig = "hosted/ports/langgraph.json"

// portPrefixes are the graph id prefixes of the ports: Python, TypeScript.
var portPrefixes = []string{"py_", "ts_"}

// TestHostedPorts runs the same cases (scenarios/python/hosted_ports.py with the official Python
// SDK, and hosted_ports.mjs with the official JS SDK) through the Go example graphs and through
// their LangGraph ports hosted by jetgraph in one server: final values, streamed values, updates and messages-tuple events (token chunks
// included), interrupts and resume, a subgraph's state updated through its checkpoint, errors,
// custom events, Send, a factory graph, runtime context, thread state and history. Ids and times
// are normalised; everything else must be the same, and the Go graphs' answers are pinned by
// testdata/hosted_ports.golden.json.
func TestHostedPorts(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	// The Python ports pin exactly what the hosted Python project pins: one environment serves both.
	userPython := ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))
	ensureNpmProject(t, filepath.Dir(hostedPortsConfig))
	srv := startServerArgs(t, t.TempDir(), "--config", hostedPortsConfig, "--python", userPython)

	// One prefix at a time: the agent cases share a store item.
	answers := map[string]map[string]json.RawMessage{}
	for _, prefix := range append([]string{""}, portPrefixes...) {
		var got map[string]json.RawMessage
		if err := json.Unmarshal([]byte(lastLine(runPython(t, srv, "hosted_ports.py", prefix))), &got); err != nil {
			t.Fatalf("hosted_ports.py %q: %v", prefix, err)
		}
		answers[prefix] = got
	}

	// The official JS SDK through the same graphs: streams, a Command, a subgraph's state update.
	if got := lastLine(runNode(t, srv, "hosted_ports.mjs")); got != "ok" {
		t.Errorf("hosted_ports.mjs printed %q, want ok", got)
	}

	goAnswers := answers[""]
	cases := sortedKeys(goAnswers)
	for _, name := range cases {
		if bytes.Contains(goAnswers[name], []byte(`"failed"`)) {
			t.Errorf("the Go graphs failed case %s: %s", name, goAnswers[name])
		}
	}
	pretty, err := json.MarshalIndent(goAnswers, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	goldentest.Check(t, filepath.Join("testdata", "hosted_ports.golden.json"), append(pretty, '\n'))

	for _, prefix := range portPrefixes {
		for _, name := range cases {
			got, want := answers[prefix][name], goAnswers[name]
			if !jsonEqual(got, want) {
				t.Errorf("case %s: the %s port answers differently from the Go graph:\n%s", name, prefix, firstDifference(want, got))
			}
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// jsonEqual reports whether two JSON documents hold the same value.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return bytes.Equal(xs, ys)
}

// firstDifference names the first place (a JSON path) where got differs from want, with both
// values there.
func firstDifference(want, got json.RawMessage) string {
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		return "want: " + err.Error()
	}
	if err := json.Unmarshal(got, &g); err != nil {
		return fmt.Sprintf("got %s: %v", got, err)
	}
	return diffAt("$", w, g)
}

func diffAt(path string, w, g any) string {
	show := func(v any) string {
		b, _ := json.Marshal(v)
		if len(b) > 400 {
			return string(b[:400]) + "..."
		}
		return string(b)
	}
	switch wv := w.(type) {
	case map[string]any:
		gv, ok := g.(map[string]any)
		if !ok {
			break
		}
		keys := sortedKeys(wv)
		for k := range gv {
			if _, ok := wv[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			if d := diffAt(path+"."+k, wv[k], gv[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		gv, ok := g.([]any)
		if !ok || len(gv) != len(wv) {
			break
		}
		for i := range wv {
			if d := diffAt(fmt.Sprintf("%s[%d]", path, i), wv[i], gv[i]); d != "" {
				return d
			}
		}
		return ""
	default:
		if show(w) == show(g) {
			return ""
		}
	}
	return strings.Join([]string{"at " + path, "  go:   " + show(w), "  port: " + show(g)}, "\n")
}
