package httpapi_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// resumeCase is a section of testdata/stream/resume.sse: runs waited for on a new thread, then
// a streamed run that continues from one of its checkpoints. "$CP" in stream is replaced by
// the id of the thread's checkpoint at index from of its history (newest first).
type resumeCase struct {
	name   string
	setup  []string // bodies of /runs/wait
	from   int
	stream string // the body of /runs/stream
}

// TestStreamGoldenResumes pins what runs that continue from a checkpoint stream: first the
// state they resume from (and, in the checkpoint modes, its checkpoint), at the root and in
// resumed subgraphs; a command.update without resume streams its input checkpoint as values.
func TestStreamGoldenResumes(t *testing.T) {
	s := startStreamStack(t, 0)
	agentIn := `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"foo"}],"interrupt":true}}`
	echoIn := `{"assistant_id":"echo","input":{"messages":[{"role":"user","content":"foo"}]}}`
	cases := []resumeCase{
		{name: "resume an interrupt", setup: []string{agentIn},
			stream: `{"assistant_id":"agent","command":{"resume":"yes"},"stream_mode":["values","updates","checkpoints"]}`},
		{name: "continue a subgraph", setup: []string{`{"assistant_id":"weather","input":{"messages":[{"role":"user","content":"SF"}]}}`},
			stream: `{"assistant_id":"weather","input":null,"stream_mode":["values","updates"],"stream_subgraphs":true}`},
		{name: "regenerate from a checkpoint", setup: []string{echoIn}, from: 1,
			stream: `{"assistant_id":"echo","input":null,"checkpoint_id":"$CP","stream_mode":["values","debug"]}`},
		{name: "update without resume", setup: []string{echoIn},
			stream: `{"assistant_id":"echo","command":{"update":{"messages":[{"role":"user","content":"bar","id":"bar"}]}},"stream_mode":["values","checkpoints"]}`},
	}
	out := make([]string, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Go(func() {
			tid := s.thread(t)
			for _, body := range c.setup {
				if code, raw := s.status(t, "POST", "/threads/"+tid+"/runs/wait", body, nil); code != 200 {
					t.Errorf("%s: setup %d %s", c.name, code, raw)
					return
				}
			}
			body := c.stream
			if strings.Contains(body, "$CP") {
				_, raw := s.status(t, "GET", "/threads/"+tid+"/history", "", nil)
				var hist []struct {
					CheckpointID string `json:"checkpoint_id"`
				}
				if err := json.Unmarshal([]byte(raw), &hist); err != nil || len(hist) <= c.from {
					t.Errorf("%s: history %s", c.name, raw)
					return
				}
				body = strings.ReplaceAll(body, "$CP", hist[c.from].CheckpointID)
			}
			_, events := s.stream(t, "POST", "/threads/"+tid+"/runs/stream", body, nil)
			out[i] = "### " + c.name + "\n" + normalise(transcript(events))
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	checkGolden(t, filepath.Join("testdata", "stream", "resume.sse"), strings.Join(out, ""))
}
