package httpapi_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/jetgraph/jetgraph/engine/goldentest"
)

// The golden transcripts of testdata/stream/<graph>.sse: each shipped graph streamed in each
// mode, ids, uuids and times normalised. UPDATE_GOLDEN=1 rewrites them.

// goldenCase is one section of a transcript: a run of graph with body's input and modes.
type goldenCase struct {
	name string
	body string // the fields after assistant_id
}

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	hexRE  = regexp.MustCompile(`\b[0-9a-f]{32}\b`)
	callRE = regexp.MustCompile(`call_[0-9a-f]{12}`)
	timeRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(\+00:00|Z)`)
	idRE   = regexp.MustCompile(`(?m)^id: \d+-\d+$`)
)

// normalise makes a transcript independent of ids, uuids and times: each distinct uuid (and
// 32-digit hex id, and tool call id) becomes <uuid-N> (<hex-N>, <call-N>) in order of first
// appearance.
func normalise(s string) string {
	s = idRE.ReplaceAllString(s, "id: <id>")
	s = timeRE.ReplaceAllString(s, "<time>")
	for _, re := range []struct {
		re   *regexp.Regexp
		name string
	}{{uuidRE, "uuid"}, {hexRE, "hex"}, {callRE, "call"}} {
		seen := map[string]string{}
		s = re.re.ReplaceAllStringFunc(s, func(m string) string {
			if r, ok := seen[m]; ok {
				return r
			}
			seen[m] = fmt.Sprintf("<%s-%d>", re.name, len(seen)+1)
			return seen[m]
		})
	}
	return s
}

// transcript renders events as the wire shows them.
func transcript(events []sseEvent) string {
	var b strings.Builder
	for _, e := range events {
		if e.Comment != "" {
			fmt.Fprintf(&b, ": %s\n\n", e.Comment)
			continue
		}
		fmt.Fprintf(&b, "event: %s\ndata: %s\nid: %s\n\n", e.Event, e.Data, e.ID)
	}
	return b.String()
}

var allModes = []string{"values", "updates", "messages-tuple", "messages", "events", "debug", "tasks", "checkpoints", "custom"}

// modeCases is one case per stream mode with input in.
func modeCases(in string, modes ...string) []goldenCase {
	var cs []goldenCase
	for _, m := range modes {
		cs = append(cs, goldenCase{m, `"input":` + in + `,"stream_mode":"` + m + `"`})
	}
	return cs
}

func TestStreamGoldenTranscripts(t *testing.T) {
	s := startStreamStack(t, 0)
	agentIn := `{"messages":[{"role":"user","content":"foo"}],"sleep":{"steps":2,"ms":1}}`
	graphsCases := map[string][]goldenCase{
		"echo": append(modeCases(fooInput, allModes...),
			goldenCase{"several modes as a JSON string", `"input":` + fooInput + `,"stream_mode":"[\"values\",\"updates\",\"messages-tuple\"]"`}),
		"agent": append(modeCases(agentIn, allModes...),
			goldenCase{"interrupt", `"input":{"messages":[{"role":"user","content":"foo"}],"interrupt":true},"stream_mode":["values","updates","tasks"]`}),
		"weather": append(modeCases(`{"messages":[{"role":"user","content":"what is the weather in sf"}]}`, allModes...),
			goldenCase{"subgraphs", `"input":{"messages":[{"role":"user","content":"what is the weather in sf"}]},"stream_mode":["values","updates","debug"],"stream_subgraphs":true`}),
		"error": modeCases(fooInput, "values", "updates", "events", "debug", "tasks"),
		"react": modeCases(`{"messages":[{"role":"user","content":"calculator: 2 + 3 * 4"}]}`, "messages-tuple", "messages", "events", "updates"),
		"nested": {
			{"subgraphs", `"input":{"messages":["hi"]},"stream_mode":["values","updates","tasks"],"stream_subgraphs":true`},
			{"no subgraphs", `"input":{"messages":["hi"]},"stream_mode":["values","updates","tasks"]`},
		},
	}
	for graphID, cases := range graphsCases {
		t.Run(graphID, func(t *testing.T) {
			t.Parallel()
			out := make([]string, len(cases))
			var wg sync.WaitGroup
			for i, c := range cases {
				wg.Go(func() {
					tid := s.thread(t)
					_, events := s.stream(t, "POST", "/threads/"+tid+"/runs/stream", `{"assistant_id":"`+graphID+`",`+c.body+`}`, nil)
					out[i] = "### " + c.name + "\n" + normalise(transcript(events))
				})
			}
			wg.Wait()
			checkGolden(t, filepath.Join("testdata", "stream", graphID+".sse"), strings.Join(out, ""))
		})
	}
}

// checkGolden compares got with the file (goldentest rewrites it).
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	goldentest.Check(t, path, []byte(got))
}
