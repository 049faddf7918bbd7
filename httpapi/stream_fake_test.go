package httpapi_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/streaming"
	"github.com/jetgraph/jetgraph/httpapi"
)

// fakeFollower serves its frames, then ends with err (nil: the stream ended).
type fakeFollower struct {
	frames []streaming.Frame
	err    error
	closed *atomic.Int32
}

func (f fakeFollower) Serve(_ context.Context, sink streaming.FrameSink) error {
	for _, fr := range f.frames {
		if err := sink.WriteFrame(fr); err != nil {
			return err
		}
	}
	if err := sink.Flush(); err != nil {
		return err
	}
	return f.err
}

func (f fakeFollower) Close() { f.closed.Add(1) }

// fakeStreams is a StreamService whose thread streams are follow's followers.
type fakeStreams struct {
	httpapi.StreamService
	follow func(r streaming.ThreadRequest) httpapi.Follower
}

func (f fakeStreams) FollowThread(_ context.Context, r streaming.ThreadRequest) (httpapi.Follower, error) {
	return f.follow(r), nil
}

// TestStreamAnswerOfAFollower checks the bytes of a thread stream's answer, against a follower
// of the test's own: the frames as the follower wrote them, the Last-Event-ID a client resumes
// with handed to the follow, a bus failing under a client still there ending the stream with an
// error event (its message stripped of secrets) and an end, and the follower closed once.
func TestStreamAnswerOfAFollower(t *testing.T) {
	frames := []streaming.Frame{
		{Event: "metadata", Data: []byte(`{"run_id":"r1"}`), ID: "1700000000000-7"},
		{Comment: "heartbeat"},
		{Event: "values", Data: []byte("{\n  \"messages\": []\n}"), ID: "1700000000000-8"},
	}
	sent := "event: metadata\ndata: {\"run_id\":\"r1\"}\nid: 1700000000000-7\n\n" +
		": heartbeat\n\n" +
		"event: values\ndata: {\"messages\":[]}\nid: 1700000000000-8\n\n"
	tests := []struct {
		name, lastEventID string
		err               error
		want              string
	}{
		{"from the start", "", nil, sent},
		{"resumed", "1700000000000-6", nil, sent},
		{"the bus fails", "", errors.New("streaming: reading https://user:pw@nats.example/x: gone"),
			sent + "event: error\ndata: {\"error\":\"StreamError\",\"message\":\"streaming: reading https://\\u003credacted\\u003e@nats.example/x: gone\"}\n\n" +
				"event: end\ndata: null\n\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var asked []streaming.ThreadRequest
			var closed atomic.Int32
			_, ts := serveFakes(t, httpapi.Deps{
				Threads: fakeThreads{get: func(context.Context, string) (engine.Thread, error) {
					return engine.Thread{ThreadID: threadID}, nil
				}},
				Runs: fakeRuns{},
				Streams: fakeStreams{follow: func(r streaming.ThreadRequest) httpapi.Follower {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, r)
					return fakeFollower{frames: frames, err: tc.err, closed: &closed}
				}},
			})
			req, _ := http.NewRequest("GET", ts.URL+"/threads/"+threadID+"/stream", nil)
			if tc.lastEventID != "" {
				req.Header.Set("Last-Event-ID", tc.lastEventID)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" ||
				resp.Header.Get("Location") != "/threads/"+threadID+"/stream" {
				t.Fatalf("answer %d %v: %s", resp.StatusCode, resp.Header, body)
			}
			if string(body) != tc.want {
				t.Fatalf("body\n%q\nwant\n%q", body, tc.want)
			}
			mu.Lock()
			defer mu.Unlock()
			after, resume, _ := streaming.ParseEventID(tc.lastEventID)
			want := streaming.ThreadRequest{ThreadID: threadID, After: after, Resume: resume}
			if len(asked) != 1 || asked[0].ThreadID != want.ThreadID || asked[0].After != want.After || asked[0].Resume != want.Resume ||
				len(asked[0].Modes) != 0 {
				t.Fatalf("followed %+v, want %+v", asked, want)
			}
			if tc.lastEventID != "" && !resume {
				t.Fatalf("Last-Event-ID %s does not resume", tc.lastEventID)
			}
			if n := closed.Load(); n != 1 {
				t.Fatalf("follower closed %d times", n)
			}
		})
	}
}
