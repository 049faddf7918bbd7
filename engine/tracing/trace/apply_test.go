package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
)

const (
	rootID  = "019a0000-0000-7000-8000-000000000001"
	childID = "019a0000-0000-7000-8000-000000000002"
	grandID = "019a0000-0000-7000-8000-000000000003"
)

var (
	t0          = time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
	rootDotted  = FormatSegment(t0, rootID)
	childDotted = rootDotted + "." + FormatSegment(t0.Add(time.Millisecond), childID)
)

// post and patch of a child llm run, as the Python client sends them.
func childPost(t *testing.T) map[string]any {
	return object(t, fmt.Sprintf(`{"id": %q, "trace_id": %q, "dotted_order": %q, "parent_run_id": %q,
		"name": "ChatOpenAI", "run_type": "llm", "start_time": "2026-03-01T12:00:00.124456",
		"inputs": {"messages": [{"role": "user", "content": "hi"}]}, "extra": {"metadata": {"ls_model_name": "gpt-4o", "a": 1}},
		"tags": ["x"], "session_name": "proj", "outputs": {"stale": true}}`, childID, rootID, childDotted, rootID))
}

func childPatch(t *testing.T) map[string]any {
	return object(t, fmt.Sprintf(`{"id": %q, "trace_id": %q, "dotted_order": %q, "parent_run_id": %q,
		"end_time": 1772366401124.5, "outputs": {"role": "assistant", "content": "hello"}, "error": null,
		"extra": {"metadata": {"b": 2}, "runtime": {"sdk": "py"}}, "tags": ["y"], "name": null,
		"events": [{"name": "new_token", "time": "2026-03-01T12:00:00.500000+00:00"}]}`, childID, rootID, childDotted, rootID))
}

func TestApplyUpsertOrders(t *testing.T) {
	var postFirst, patchFirst, merged Run
	for _, step := range []struct {
		r    *Run
		kind string
		raw  map[string]any
	}{
		{&postFirst, KindPost, childPost(t)}, {&postFirst, KindPatch, childPatch(t)},
		{&patchFirst, KindPatch, childPatch(t)}, {&patchFirst, KindPost, childPost(t)},
	} {
		if err := Apply(step.r, step.kind, step.raw, true); err != nil {
			t.Fatalf("%s: %v", step.kind, err)
		}
	}
	all := childPost(t)
	for k, v := range childPatch(t) {
		if v != nil {
			all[k] = v
		}
	}
	// A client that merges sends the run's final extra and tags.
	all["extra"] = deepMerge(childPost(t)["extra"].(map[string]any), childPatch(t)["extra"].(map[string]any))
	all["tags"] = []any{"x", "y"}
	if err := Apply(&merged, KindPost, all, true); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*Run{"post then patch": &postFirst, "patch then post": &patchFirst, "merged": &merged} {
		if r.Outputs["content"] != "hello" || r.Name != "ChatOpenAI" || r.EndTime == nil || r.Error != nil {
			t.Errorf("%s: outputs %v name %q end %v error %v", name, r.Outputs, r.Name, r.EndTime, r.Error)
		}
		if want := time.Date(2026, 3, 1, 12, 0, 1, 124500000, time.UTC); !r.EndTime.Equal(want) {
			t.Errorf("%s: end_time %v, want %v (epoch ms)", name, r.EndTime, want)
		}
		if want := time.Date(2026, 3, 1, 12, 0, 0, 124456000, time.UTC); !r.StartTime.Equal(want) {
			t.Errorf("%s: start_time %v, want %v (no zone is UTC)", name, r.StartTime, want)
		}
		md := r.Metadata()
		if md["a"] != 1.0 || md["b"] != 2.0 || md["ls_model_name"] != "gpt-4o" || path(r.Extra, "runtime", "sdk") != "py" {
			t.Errorf("%s: extra %v", name, r.Extra)
		}
		if len(r.Events) != 1 || r.SessionName != "proj" || r.TraceID != rootID || r.ParentRunID == nil || *r.ParentRunID != rootID {
			t.Errorf("%s: events %v session %q trace %q", name, r.Events, r.SessionName, r.TraceID)
		}
		tags := append([]string(nil), r.Tags...)
		if strings.Join(tags, ",") != "x,y" && strings.Join(tags, ",") != "y,x" {
			t.Errorf("%s: tags %v", name, r.Tags)
		}
	}
	// A patch's fields stay when a later post carries others, and are recorded for storage.
	if !reflect.DeepEqual(patchFirst.Patched, []string{"dotted_order", "end_time", "events", "extra", "outputs", "parent_run_id", "trace_id"}) {
		t.Errorf("patched = %v", patchFirst.Patched)
	}
	// What storage keeps reads back the same, bookkeeping included.
	b, err := json.Marshal(patchFirst)
	if err != nil {
		t.Fatal(err)
	}
	var back Run
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if err := Apply(&back, KindPost, childPost(t), true); err != nil {
		t.Fatal(err)
	}
	if back.Outputs["content"] != "hello" {
		t.Errorf("after a round trip a late post overwrote the patch's outputs: %v", back.Outputs)
	}
}

func TestApplyNullNeverErases(t *testing.T) {
	var r Run
	if err := Apply(&r, KindPost, childPost(t), false); err != nil {
		t.Fatal(err)
	}
	raw := object(t, fmt.Sprintf(`{"id": %q, "name": null, "inputs": null, "tags": null, "extra": null, "parent_run_id": null}`, childID))
	if err := Apply(&r, KindPatch, raw, false); err != nil {
		t.Fatal(err)
	}
	if r.Name != "ChatOpenAI" || r.Inputs == nil || len(r.Tags) != 1 || r.Extra == nil || r.ParentRunID == nil {
		t.Errorf("null erased a field: %+v", r)
	}
	// A later post overrides an earlier post.
	raw = object(t, fmt.Sprintf(`{"id": %q, "name": "Renamed", "run_type": "llm"}`, childID))
	if err := Apply(&r, KindPost, raw, false); err != nil || r.Name != "Renamed" {
		t.Errorf("second post: %v, name %q", err, r.Name)
	}
}

func TestApplyFillsIn(t *testing.T) {
	// A root posted without trace_id and dotted_order (POST /runs of older clients).
	var root Run
	raw := object(t, fmt.Sprintf(`{"id": %q, "name": "chain", "run_type": "chain", "start_time": "2026-03-01T12:00:00.123456Z"}`, strings.ToUpper(rootID)))
	if err := Apply(&root, KindPost, raw, false); err != nil {
		t.Fatal(err)
	}
	if root.ID != rootID || root.TraceID != rootID || root.DottedOrder != rootDotted || root.ParentRunID != nil {
		t.Errorf("root: id %s trace %s dotted %s", root.ID, root.TraceID, root.DottedOrder)
	}
	// A child with only its dotted_order gains its trace and parent.
	var child Run
	raw = object(t, fmt.Sprintf(`{"id": %q, "name": "c", "run_type": "tool", "dotted_order": %q}`, childID, childDotted))
	if err := Apply(&child, KindPost, raw, false); err != nil {
		t.Fatal(err)
	}
	if child.TraceID != rootID || child.ParentRunID == nil || *child.ParentRunID != rootID {
		t.Errorf("child: trace %s parent %v", child.TraceID, child.ParentRunID)
	}
}

func TestApplyTimestamps(t *testing.T) {
	want := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
	for _, in := range []any{"2026-03-01T12:00:00.123456Z", "2026-03-01T12:00:00.123456+00:00", "2026-03-01T12:00:00.123456",
		"2026-03-01T13:00:00.123456+01:00", "2026-03-01 12:00:00.123456", 1772366400123.456, "1772366400123.456", json.Number("1772366400123.456")} {
		got, err := ParseTime(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%v) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []any{"yesterday", true, map[string]any{}, "2026-13-01T00:00:00Z"} {
		if _, err := ParseTime(in); err == nil {
			t.Errorf("ParseTime(%v) succeeded", in)
		}
	}
}

func TestApplyValidation(t *testing.T) {
	tests := []struct {
		name, kind, raw string
		requireIDs      bool
		want            []string // "field: message fragment"
	}{
		{"everything wrong", KindPost, `{"id": "nope", "trace_id": "x", "parent_run_id": 5, "run_type": "agent", "name": 3,
			"start_time": "soon", "end_time": false, "inputs": [1], "outputs": "s", "extra": 1, "events": [1], "tags": "t",
			"dotted_order": "2026-03-01.x", "session_id": "s", "reference_example_id": "r", "attachments": {"a": 1}}`, false,
			[]string{"id: is not a UUID", "trace_id: is not a UUID", "parent_run_id: must be a string", "session_id: is not a UUID",
				"reference_example_id: is not a UUID", "name: must be a string", "run_type: is not one of llm, chain, tool, retriever, embedding, prompt, parser",
				"start_time: is not an ISO 8601 time", "end_time: a boolean is not", "inputs: must be an object", "outputs: must be an object",
				"extra: must be an object", "events.0: must be an object", "tags: must be a list", "attachments.a: must be an object",
				"dotted_order: segment 0"}},
		{"missing id and post fields", KindPost, `{}`, true,
			[]string{"id: field required", "name: field required", "run_type: field required", "trace_id: field required", "dotted_order: field required"}},
		{"patch needs only an id", KindPatch, `{"end_time": "2026-03-01T12:00:00Z"}`, true, []string{"id: field required"}},
		{"dotted_order naming others", KindPost, fmt.Sprintf(`{"id": %q, "trace_id": %q, "parent_run_id": %q, "name": "n", "run_type": "llm",
			"dotted_order": %q}`, grandID, childID, grandID, childDotted), false,
			[]string{"dotted_order: the last segment names " + childID, "dotted_order: the first segment names " + rootID + ", not the trace_id",
				"dotted_order: the parent segment names " + rootID + ", not the parent_run_id"}},
		{"root dotted_order with a parent", KindPost, fmt.Sprintf(`{"id": %q, "parent_run_id": %q, "name": "n", "run_type": "llm",
			"dotted_order": %q}`, rootID, childID, rootDotted), false, []string{"dotted_order: a root's dotted_order"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r Run
			err := Apply(&r, tc.kind, object(t, tc.raw), tc.requireIDs)
			var e *engine.Error
			if !errors.As(err, &e) || e.Kind != engine.Invalid {
				t.Fatalf("err = %v, want an Invalid *engine.Error", err)
			}
			var got []string
			for _, f := range e.Fields {
				var loc []string
				for _, l := range f.Loc[1:] {
					loc = append(loc, fmt.Sprint(l))
				}
				got = append(got, strings.Join(loc, ".")+": "+f.Msg)
			}
			if len(got) != len(tc.want) {
				t.Errorf("got %d problems, want %d:\n%s", len(got), len(tc.want), strings.Join(got, "\n"))
			}
			for _, w := range tc.want {
				field, frag, _ := strings.Cut(w, ": ")
				found := false
				for _, g := range got {
					if strings.HasPrefix(g, field+": ") && strings.Contains(g, frag) {
						found = true
					}
				}
				if !found {
					t.Errorf("no problem %q among:\n%s", w, strings.Join(got, "\n"))
				}
			}
			if !reflect.DeepEqual(r, Run{}) {
				t.Errorf("a rejected payload changed the run: %+v", r)
			}
		})
	}
	var r Run
	if err := Apply(&r, KindPost, childPost(t), true); err != nil {
		t.Fatal(err)
	}
	if err := Apply(&r, KindPatch, object(t, fmt.Sprintf(`{"id": %q}`, rootID)), false); err == nil {
		t.Error("a payload of another run was merged")
	}
	if err := Apply(&r, "put", childPost(t), false); !engine.Is(engine.Invalid, err) {
		t.Errorf("kind put: %v", err)
	}
}
