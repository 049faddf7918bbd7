package eventlog_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// sameEvent compares events as the log hands them out: times by instant and offset.
func sameEvent(t *testing.T, got, want eventlog.Event) {
	t.Helper()
	_, gotOff := got.Time.Zone()
	_, wantOff := want.Time.Zone()
	if !got.Time.Equal(want.Time) || gotOff != wantOff {
		t.Errorf("time %v, want %v", got.Time, want.Time)
	}
	got.Time, want.Time = time.Time{}, time.Time{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("event\n %+v\nwant\n %+v", got, want)
	}
}

// TestMessageFormsReadBack appends events in the framed form and publishes messages in the
// two JSON forms earlier builds wrote (an object, an array): every one reads back the same.
func TestMessageFormsReadBack(t *testing.T) {
	ctx := context.Background()
	l := eventlogtest.Open(t)
	agg := thread("forms")
	at := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.FixedZone("", 2*3600))
	ev := func(id, typ, data string) eventlog.Event {
		e := eventlog.Event{ID: id, Type: typ, Aggregate: agg, Time: at, Version: eventlog.SchemaVersion}
		if data != "" {
			e.Data = json.RawMessage(data)
		}
		return e
	}
	var want []eventlog.Event

	// Framed: one event, then a packed batch (one without data, which reads back as null).
	one := ev("01JT0000000000000000000001", "created", `{"n":1,"s":"é\u0000"}`)
	seq, err := l.Append(ctx, one, eventlog.At(0))
	if err != nil {
		t.Fatal(err)
	}
	one.Seq = seq
	want = append(want, one)
	packed := []eventlog.Event{ev("01JT0000000000000000000002", "step", `[1,2]`), ev("01JT0000000000000000000003", "step", "")}
	seq, err = l.AppendBatch(ctx, []eventlog.Pending{{Event: packed[0]}, {Event: packed[1]}})
	if err != nil {
		t.Fatal(err)
	}
	packed[1].Data = json.RawMessage("null")
	for _, e := range packed {
		e.Seq = seq
		want = append(want, e)
	}

	// The JSON forms, published as an earlier build did.
	legacy := func(body any, events ...eventlog.Event) {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		m := nats.NewMsg(events[0].Subject())
		m.Data = raw
		ack, err := eventlogtest.JetStream(l).PublishMsg(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			e.Seq = ack.Sequence
			want = append(want, e)
		}
	}
	obj := ev("01JT0000000000000000000004", "renamed", `{"name":"x"}`)
	legacy(obj, obj)
	arr := []eventlog.Event{ev("01JT0000000000000000000005", "a", `{}`), ev("01JT0000000000000000000006", "b", `"s"`)}
	legacy(arr, arr...)

	got, err := l.Load(ctx, agg)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d events read back, want %d", len(got), len(want))
	}
	for i := range want {
		sameEvent(t, got[i], want[i])
	}
}

func TestDecodeMessageRefusesDamage(t *testing.T) {
	for name, body := range map[string][]byte{
		"empty":            {},
		"framed, no count": {0x01},
		"framed, short":    {0x01, 0x01, 0x05, 'a'},
		"framed, too many": {0x01, 0xff, 0xff, 0x03},
		"json":             []byte(`{"id":`),
	} {
		if _, err := eventlog.DecodeMessage(body); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// BenchmarkDecodeMessage compares reading a packed message of six 2 KiB events in the framed
// form and in the JSON array form earlier builds wrote.
func BenchmarkDecodeMessage(b *testing.B) {
	data, _ := json.Marshal(map[string]any{"run": map[string]string{"inputs": strings.Repeat("lorem ipsum dolor sit amet ", 76)}})
	var events []eventlog.Event
	for range 6 {
		e, _ := eventlog.New(thread("bench"), "run_posted", json.RawMessage(data))
		events = append(events, e)
	}
	arr, _ := json.Marshal(events)
	forms := map[string][]byte{"json": arr}
	l := eventlogtest.Open(b)
	pend := make([]eventlog.Pending, len(events))
	for i, e := range events {
		pend[i] = eventlog.Pending{Event: e}
	}
	if _, err := l.AppendBatch(context.Background(), pend); err != nil {
		b.Fatal(err)
	}
	raw, err := eventlogtest.JetStream(l).Stream(context.Background(), eventlog.RuntimeStream)
	if err != nil {
		b.Fatal(err)
	}
	msg, err := raw.GetLastMsgForSubject(context.Background(), events[0].Subject())
	if err != nil {
		b.Fatal(err)
	}
	forms["framed"] = msg.Data
	for _, name := range []string{"framed", "json"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := eventlog.DecodeMessage(forms[name]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
