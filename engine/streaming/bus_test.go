package streaming

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// recorder is a FrameSink that keeps what it is sent.
type recorder struct {
	mu      sync.Mutex
	frames  []Frame
	flushes int
}

func (r *recorder) WriteFrame(f Frame) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	f.Data = bytes.Clone(f.Data)
	r.frames = append(r.frames, f)
	return nil
}

func (r *recorder) Flush() error {
	r.mu.Lock()
	r.flushes++
	r.mu.Unlock()
	return nil
}

func (r *recorder) events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, f := range r.frames {
		if f.Comment != "" {
			out = append(out, ": "+f.Comment)
		} else {
			out = append(out, f.Event)
		}
	}
	return out
}

// openBus opens an embedded log with the given output retention and a Streamer on it.
func openBus(t testing.TB, retention time.Duration, logs io.Writer) (*eventlog.Log, *Streamer) {
	t.Helper()
	if logs == nil {
		logs = io.Discard
	}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	l, err := eventlog.Open(context.Background(), eventlog.Config{Dir: t.TempDir(), Logger: logger, OutputRetention: retention})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l, New(Config{Bus: l.OutputBus(), Logger: logger})
}

func testRun(modes ...engine.StreamMode) engine.RunRecord {
	return engine.RunRecord{Run: engine.Run{RunID: uuid.NewString(), ThreadID: uuid.NewString(), AssistantID: "a",
		Kwargs: engine.RunKwargs{StreamMode: modes}}, Attempt: 1}
}

// follow serves the run's stream into a recorder until it ends.
func follow(t testing.TB, s *Streamer, r RunRequest) *recorder {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, err := s.FollowRun(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec := &recorder{}
	if err := f.Serve(ctx, rec); err != nil {
		t.Fatalf("serve: %v (got %v)", err, rec.events())
	}
	return rec
}

func TestPublishFollowAndResume(t *testing.T) {
	_, s := openBus(t, 0, nil)
	ctx := context.Background()
	rec := testRun("values", "custom")
	sink := s.Begin(ctx, rec)
	for i := range 5 {
		sink(graph.Event{Kind: graph.KindCustom, Data: map[string]any{"i": i}})
	}
	sink(graph.Event{Kind: graph.KindValues, Data: graph.State{"done": true}})
	s.End(ctx, rec, engine.RunFinishedData{RunID: rec.RunID, Status: engine.RunSuccess})

	modes := []engine.StreamMode{"values", "custom"}
	all := follow(t, s, RunRequest{ThreadID: rec.ThreadID, RunID: rec.RunID, Modes: modes})
	if got := strings.Join(all.events(), ","); got != "metadata,custom,custom,custom,custom,custom,values,end" {
		t.Fatalf("events = %s", got)
	}
	// Resume after the third event: only later ones, none repeated.
	third := all.frames[2]
	after, _, err := ParseEventID(third.ID)
	if err != nil {
		t.Fatal(err)
	}
	later := follow(t, s, RunRequest{ThreadID: rec.ThreadID, RunID: rec.RunID, Modes: modes, After: after, Resume: true})
	if len(later.frames) != len(all.frames)-3 {
		t.Fatalf("resumed = %v", later.events())
	}
	for i, f := range later.frames {
		if f.ID != all.frames[i+3].ID || !bytes.Equal(f.Data, all.frames[i+3].Data) {
			t.Errorf("resumed frame %d = %s %s, want %s %s", i, f.ID, f.Data, all.frames[i+3].ID, all.frames[i+3].Data)
		}
	}
	// The old plain-integer form names a message: the stream resumes after all of its frames.
	msg := messageOf(after)
	plainPos, _, _ := ParseEventID(strconv.FormatUint(msg, 10))
	plain := follow(t, s, RunRequest{ThreadID: rec.ThreadID, RunID: rec.RunID, Modes: modes, After: plainPos, Resume: true})
	want := 0
	for _, f := range all.frames {
		if pos, _, _ := ParseEventID(f.ID); messageOf(pos) > msg {
			want++
		}
	}
	if len(plain.frames) != want {
		t.Errorf("plain id resumed %v, want %d frames", plain.events(), want)
	}
}

func TestExpiredLastEventIDRestarts(t *testing.T) {
	_, s := openBus(t, time.Second, nil)
	ctx := context.Background()
	rec := testRun("custom")
	sink := s.Begin(ctx, rec)
	sink(graph.Event{Kind: graph.KindCustom, Data: "old"})
	time.Sleep(1500 * time.Millisecond)
	sink(graph.Event{Kind: graph.KindCustom, Data: "new"})
	s.End(ctx, rec, engine.RunFinishedData{RunID: rec.RunID, Status: engine.RunSuccess})
	got := follow(t, s, RunRequest{ThreadID: rec.ThreadID, RunID: rec.RunID, Modes: []engine.StreamMode{"custom"}, After: position(1, 0), Resume: true})
	ev := got.events()
	if len(ev) != 3 || !strings.HasPrefix(ev[0], ": Last-Event-ID 1 is older than the stream's retention") || ev[1] != "custom" || ev[2] != "end" {
		t.Errorf("events = %q", ev)
	}
}

func TestFollowerLeavesNothingBehind(t *testing.T) {
	l, s := openBus(t, 0, nil)
	s.Heartbeat = 10 * time.Millisecond
	ctx := context.Background()
	rec := testRun("custom")
	sink := s.Begin(ctx, rec)
	sink(graph.Event{Kind: graph.KindCustom, Data: 1})
	s.Flush(ctx, rec) // the publisher's own goroutines (the client's first async publish starts one) are up
	st, err := eventlogtest.JetStream(l).Stream(ctx, eventlog.OutputStream)
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	for range 3 {
		cctx, cancel := context.WithCancel(ctx)
		f, err := s.FollowRun(cctx, RunRequest{ThreadID: rec.ThreadID, RunID: rec.RunID})
		if err != nil {
			t.Fatal(err)
		}
		r := &recorder{}
		done := make(chan error, 1)
		go func() { done <- f.Serve(cctx, r) }()
		waitFor(t, func() bool { return strings.Contains(strings.Join(r.events(), ","), ": heartbeat") })
		cancel()
		if err := <-done; err == nil {
			t.Fatal("Serve ended without the client leaving")
		}
		f.Close()
	}
	waitFor(t, func() bool { return runtime.NumGoroutine() <= before })
	waitFor(t, func() bool {
		info, err := st.Info(ctx)
		return err == nil && info.State.Consumers == 0
	})
	s.End(ctx, rec, engine.RunFinishedData{RunID: rec.RunID, Status: engine.RunSuccess})
}

// waitFor polls cond for up to 5 seconds.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("condition not met in 5s; goroutines:\n%s", buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestRunPublishesWhatItsModesNeed(t *testing.T) {
	_, s := openBus(t, 0, nil)
	ctx := context.Background()
	rec := testRun("values", "custom")
	sink := s.Begin(ctx, rec)
	sink(graph.Event{Kind: graph.KindTaskStart, Data: graph.TaskStart{ID: "t", Name: "n", Triggers: []string{}}})
	sink(graph.Event{Kind: graph.KindUpdates, Data: graph.NodeUpdate{Node: "n", Values: map[string]any{"x": 1}}})
	sink(graph.Event{Kind: graph.KindValues, Data: graph.State{"x": 1}})
	sink(graph.Event{Kind: graph.KindCustom, Data: "c"})
	sink(graph.Event{Kind: graph.KindCheckpoint, Data: graph.CheckpointSaved{}})
	s.End(ctx, rec, engine.RunFinishedData{RunID: rec.RunID, Status: engine.RunSuccess})
	// A client joining in every mode gets only what the run's own modes carry.
	got := follow(t, s, RunRequest{ThreadID: rec.ThreadID, RunID: rec.RunID, Modes: []engine.StreamMode{"values", "updates", "tasks", "custom", "checkpoints"}})
	if strings.Join(got.events(), ",") != "metadata,values,custom,end" {
		t.Errorf("events = %v", got.events())
	}
}

func TestCarriedEvents(t *testing.T) {
	tests := []struct {
		modes []engine.StreamMode
		want  string // sorted, "*" for every event
	}{
		{[]engine.StreamMode{"values"}, "values"},
		{[]engine.StreamMode{"updates", "custom"}, "custom,updates"},
		{[]engine.StreamMode{"debug"}, "checkpoints,task_result,task_start"},
		{[]engine.StreamMode{"messages-tuple"}, "checkpoints,messages,task_result,task_start,updates,values"},
		{[]engine.StreamMode{"messages", "values"}, "checkpoints,messages,task_result,task_start,updates,values"},
		{[]engine.StreamMode{"values", "events"}, "*"},
		{[]engine.StreamMode{"lifecycle"}, ""},
		{[]engine.StreamMode{"lifecycle", "tools"}, "trace/tool_end,trace/tool_start"}, // the thread protocol's tools channel
		{nil, ""},
	}
	for _, tt := range tests {
		got := "*"
		if c := carriedEvents(tt.modes); c != nil {
			var kinds []string
			for k := range c {
				kinds = append(kinds, string(k))
			}
			slices.Sort(kinds)
			got = strings.Join(kinds, ",")
		}
		if got != tt.want {
			t.Errorf("carriedEvents(%v) = %q, want %q", tt.modes, got, tt.want)
		}
	}
}

// TestPublishRetriedWhileTheStreamIsGone publishes a run's stream while the output stream does
// not answer (as while a cluster elects its leader): the events are sent again until it answers,
// and each is stored once.
func TestPublishRetriedWhileTheStreamIsGone(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	l, err := eventlog.Open(context.Background(), eventlog.Config{Dir: t.TempDir(), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	s := New(Config{Bus: l.OutputBus(), Logger: logger})
	defer func() {
		if t.Failed() {
			t.Log(logs.String())
		}
	}()
	ctx := context.Background()
	js := eventlogtest.JetStream(l)
	st, err := js.Stream(ctx, eventlog.OutputStream)
	if err != nil {
		t.Fatal(err)
	}
	cfg := st.CachedInfo().Config
	if err := js.DeleteStream(ctx, eventlog.OutputStream); err != nil {
		t.Fatal(err)
	}
	rec := testRun("custom")
	sink := s.Begin(ctx, rec)
	for i := range 5 {
		sink(graph.Event{Kind: graph.KindCustom, Data: map[string]any{"i": i}})
	}
	// The publish is given up on by the client library and sent again by the sender; the
	// stream comes back meanwhile.
	waitFor(t, func() bool { return strings.Contains(logs.String(), "sending them again") })
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	s.Flush(ctx, rec)
	s.End(ctx, rec, engine.RunFinishedData{RunID: rec.RunID, Status: engine.RunSuccess})
	got := follow(t, s, RunRequest{ThreadID: rec.ThreadID, RunID: rec.RunID, Modes: []engine.StreamMode{"custom"}})
	if strings.Join(got.events(), ",") != "metadata,custom,custom,custom,custom,custom,end" {
		t.Fatalf("events after the stream came back = %v", got.events())
	}
	for i, f := range got.frames[1:6] {
		if string(f.Data) != `{"i":`+strconv.Itoa(i)+`}` {
			t.Errorf("custom event %d = %s", i, f.Data)
		}
	}
}
