package httpapi_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/httpapi"
)

// startCronStack is a run stack that serves crons too.
func startCronStack(t *testing.T) *stack {
	t.Helper()
	base := startStackWith(t, graphs.Examples())
	p := base.P
	d := httpapi.Deps{Threads: p.Threads, Assistants: p.Assistants, Store: p.Store, Events: p.Log, Health: p.Health,
		Runner: p.Runner, Graphs: p.Graphs, Runs: p.Runs, Crons: p.Crons}
	return &stack{URL: serve(t, httpapi.New(d).Handler()).URL, P: p}
}

// TestCronValidation lists every problem of a cron request in one 422, and answers 404 for an
// unknown assistant or thread.
func TestCronValidation(t *testing.T) {
	s := startCronStack(t)
	thread := s.newThread(t)
	cases := []struct {
		name, path, body string
		status           int
		locs             [][]any
	}{
		{"missing fields", "/runs/crons", `{}`, 422, [][]any{{"body", "assistant_id"}, {"body", "schedule"}}},
		{"bad schedule", "/runs/crons", `{"assistant_id": "echo", "schedule": "61 * * * *"}`, 422, [][]any{{"body", "schedule"}}},
		{"bad timezone", "/runs/crons", `{"assistant_id": "echo", "schedule": "0 9 * * *", "timezone": "Mars/Olympus"}`, 422, [][]any{{"body", "timezone"}}},
		{"every problem at once", "/runs/crons", `{"assistant_id": "echo", "schedule": "* * * * *", "end_time": "soon", "on_run_completed": "archive", "enabled": "maybe", "webhook": "ftp://x", "stream_mode": ["nope"]}`, 422,
			[][]any{{"body", "end_time"}, {"body", "on_run_completed"}, {"body", "enabled"}, {"body", "webhook"}, {"body", "stream_mode", 0.0}}},
		{"CRON_TZ and timezone disagree", "/runs/crons", `{"assistant_id": "echo", "schedule": "CRON_TZ=Europe/Paris 0 9 * * *", "timezone": "Asia/Tokyo"}`, 422, [][]any{{"body", "schedule"}}},
		{"unknown assistant", "/runs/crons", `{"assistant_id": "nope", "schedule": "* * * * *"}`, 404, nil},
		{"unknown thread", "/threads/00000000-0000-4000-8000-000000000000/runs/crons", `{"assistant_id": "echo", "schedule": "* * * * *"}`, 404, nil},
		{"bad thread id", "/threads/x/runs/crons", `{"assistant_id": "echo", "schedule": "* * * * *"}`, 422, [][]any{{"path", "thread_id"}}},
		{"thread cron", "/threads/" + thread + "/runs/crons", `{"assistant_id": "echo", "schedule": "CRON_TZ=Europe/Paris 0 9 * * *"}`, 200, nil},
		{"interval zero", "/runs/crons", `{"assistant_id": "echo", "schedule": "@every 0s"}`, 422, [][]any{{"body", "schedule"}}},
		{"interval negative", "/runs/crons", `{"assistant_id": "echo", "schedule": "@every -1s"}`, 422, [][]any{{"body", "schedule"}}},
		{"interval nanosecond", "/runs/crons", `{"assistant_id": "echo", "schedule": "@every 1ns"}`, 422, [][]any{{"body", "schedule"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, v := s.must(t, tc.status, "POST", tc.path, tc.body)
			if tc.status != 422 {
				return
			}
			if strings.HasPrefix(tc.name, "interval") && !strings.Contains(jsonText(t, v), "at least 1s (minEvery)") {
				t.Errorf("the answer does not name the limit: %v", v)
			}
			var got [][]any
			for _, d := range field(v, "detail").([]any) {
				got = append(got, field(d, "loc").([]any))
			}
			for _, want := range tc.locs {
				if !slices.ContainsFunc(got, func(l []any) bool { return fmt.Sprint(l) == fmt.Sprint(want) }) {
					t.Errorf("no problem at %v in %v", want, got)
				}
			}
		})
	}
}

// TestCronCRUD creates, patches, searches, counts and deletes crons, with the fields the SDKs
// read.
func TestCronCRUD(t *testing.T) {
	s := startCronStack(t)
	thread := s.newThread(t)
	_, a := s.must(t, 200, "POST", "/runs/crons", `{"assistant_id": "echo", "schedule": "0 9 * * *", "timezone": "Asia/Tokyo",
		"input": {"messages": [{"role": "user", "content": "hi"}]}, "metadata": {"team": "a"}, "config": {"configurable": {"api_key": "s3cret"}}}`)
	_, b := s.must(t, 200, "POST", "/threads/"+thread+"/runs/crons", `{"assistant_id": "agent", "schedule": "30 8 * * 1", "enabled": false}`)
	aID, bID := field(a, "cron_id").(string), field(b, "cron_id").(string)
	// 9:00 in Tokyo is 00:00 UTC.
	if next, _ := field(a, "next_run_date").(string); len(next) < 19 || next[11:19] != "00:00:00" {
		t.Errorf("next_run_date %q: want midnight UTC (9:00 Asia/Tokyo)", next)
	}
	if field(a, "thread_id") != nil || field(a, "on_run_completed") != "delete" || field(a, "enabled") != true {
		t.Errorf("stateless cron: %v", a)
	}
	if field(b, "thread_id") != thread || field(b, "enabled") != false {
		t.Errorf("thread cron: %v", b)
	}
	if got := field(field(field(field(a, "payload"), "config"), "configurable"), "api_key"); got != "********" {
		t.Errorf("the payload's secret is shown as %v, want it masked", got)
	}

	_, p := s.must(t, 200, "PATCH", "/runs/crons/"+aID, `{"schedule": "0 10 * * *", "enabled": false, "metadata": {"x": 1}}`)
	if field(p, "schedule") != "0 10 * * *" || field(p, "enabled") != false || field(field(p, "metadata"), "team") != "a" {
		t.Errorf("patched: %v", p)
	}
	if next, _ := field(p, "next_run_date").(string); len(next) < 19 || next[11:19] != "01:00:00" {
		t.Errorf("patched next_run_date %q: want 01:00 UTC", next)
	}

	count := func(body string) float64 {
		_, n := s.must(t, 200, "POST", "/runs/crons/count", body)
		return n.(float64)
	}
	if n := count(`{}`); n != 2 {
		t.Errorf("count %v, want 2", n)
	}
	if n := count(`{"thread_id": "` + thread + `"}`); n != 1 {
		t.Errorf("count by thread %v, want 1", n)
	}
	if n := count(`{"assistant_id": "echo"}`); n != 1 {
		t.Errorf("count by graph id %v, want 1", n)
	}
	h, list := s.must(t, 200, "POST", "/runs/crons/search", `{"sort_by": "cron_id", "sort_order": "asc", "limit": 1, "select": ["cron_id", "schedule"]}`)
	first := min(aID, bID)
	if l := list.([]any); len(l) != 1 || field(l[0], "cron_id") != first || len(l[0].(map[string]any)) != 2 {
		t.Errorf("search page: %v", list)
	}
	if h.Get("X-Pagination-Total") != "2" || h.Get("X-Pagination-Next") != "1" {
		t.Errorf("pagination headers %v", h)
	}
	_, list = s.must(t, 200, "POST", "/runs/crons/search", `{"enabled": false, "metadata": {"x": 1}}`)
	if l := list.([]any); len(l) != 1 || field(l[0], "cron_id") != aID {
		t.Errorf("search by enabled and metadata: %v", list)
	}

	s.must(t, 204, "DELETE", "/runs/crons/"+aID, "")
	s.must(t, 404, "DELETE", "/runs/crons/"+aID, "")
	s.must(t, 404, "PATCH", "/runs/crons/"+aID, `{}`)
	if n := count(`{}`); n != 1 {
		t.Errorf("count after delete %v, want 1", n)
	}
}

// TestCronFiresRuns: a thread cron makes a run on its thread with its payload at each tick; a
// stateless cron makes a thread per run, kept or deleted per on_run_completed.
func TestCronFiresRuns(t *testing.T) {
	s := startCronStack(t)
	thread := s.newThread(t)
	_, c := s.must(t, 200, "POST", "/threads/"+thread+"/runs/crons", `{"assistant_id": "echo", "schedule": "* * * * * *",
		"input": {"messages": [{"role": "user", "content": "tick"}]}, "metadata": {"from": "cron"}}`)
	id := field(c, "cron_id").(string)
	var runs []any
	eventually(t, "the cron made two runs", func() bool {
		_, v := s.must(t, 200, "GET", "/threads/"+thread+"/runs", "")
		runs = v.([]any)
		return len(runs) >= 2
	})
	s.must(t, 204, "DELETE", "/runs/crons/"+id, "")
	if got := field(runs[0], "metadata"); field(got, "from") != "cron" {
		t.Errorf("run metadata %v, want the cron's", got)
	}
	eventually(t, "the cron's runs echoed", func() bool {
		texts := s.stateTexts(t, thread)
		return len(texts) >= 2 && texts[1] == "echo: tick"
	})

	_, keep := s.must(t, 200, "POST", "/runs/crons", `{"assistant_id": "echo", "schedule": "* * * * * *", "on_run_completed": "keep",
		"input": {"messages": [{"role": "user", "content": "kept"}]}}`)
	keepID := field(keep, "cron_id").(string)
	kept := ""
	cronEvents := func() []string {
		events, err := s.P.Log.Load(context.Background(), eventlog.Aggregate{Kind: "cron", Tenant: engine.DefaultTenant, ID: keepID})
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, e := range events {
			types = append(types, e.Type)
		}
		return types
	}
	eventually(t, "a stateless cron's thread was kept with its run's messages", func() bool {
		_, v := s.must(t, 200, "POST", "/threads/search", `{"metadata": {"graph_id": "echo"}, "status": "idle"}`)
		for _, th := range v.([]any) {
			if id := field(th, "thread_id").(string); id != thread && len(s.stateTexts(t, id)) == 2 {
				kept = id
			}
		}
		return kept != "" && slices.Contains(cronEvents(), engine.CronFireDone)
	})
	s.must(t, 204, "DELETE", "/runs/crons/"+keepID, "")
	if texts := s.stateTexts(t, kept); len(texts) != 2 || texts[1] != "echo: kept" {
		t.Errorf("kept thread's messages %v", texts)
	}
	// The cron's changes and fires are its events on the log.
	types := cronEvents()
	if len(types) < 4 || types[0] != engine.CronCreated || types[1] != engine.CronFired || types[2] != engine.CronFireDone || types[len(types)-1] != engine.CronDeleted {
		t.Errorf("cron events %v", types)
	}
}
