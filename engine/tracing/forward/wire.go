package forward

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime/multipart"
	"net/textproto"
	"slices"
	"strconv"
	"strings"

	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections/traces"
)

// splitFields are the run fields sent as parts of their own (<kind>.<id>.<field>), as the
// clients send them: the big ones, which the target reads apart from the run's main part.
var splitFields = []string{"inputs", "outputs", "events", "extra", "error", "serialized"}

// part is one multipart part of an ingestion request.
type part struct {
	name, ctype string
	data        []byte
}

// item is what one event of the trace stream becomes: the parts of one run post or patch (with
// its attachments), or of one feedback. Items are never split across requests.
type item struct {
	parts []part
	size  int
}

func (it *item) add(name, ctype string, data []byte) {
	it.parts = append(it.parts, part{name: name, ctype: ctype, data: data})
	it.size += len(data) + len(name) + len(ctype) + 128 // the part's headers and boundary
}

// items turns one event into the items to send; nil for an event that is not forwarded (project
// changes, feedback updates and deletions: the ingestion protocol has no part for them) or that
// cannot be read (logged). An error is one to retry (the object store did not answer), or an
// event of a newer version than this build reads: the forwarder stops there until it is
// upgraded, as every reader of the log does.
func (f *Forwarder) items(ctx context.Context, e eventlog.Event) ([]item, error) {
	e, err := eventlog.Upcasts.Upcast(e)
	if err != nil {
		return nil, err
	}
	switch e.Type {
	case traces.RunPosted, traces.RunPatched:
		kind := trace.KindPost
		if e.Type == traces.RunPatched {
			kind = trace.KindPatch
		}
		it, err := f.runItem(ctx, e, kind)
		if err != nil || it == nil {
			return nil, err
		}
		return []item{*it}, nil
	case traces.FeedbackCreated:
		var d traces.FeedbackData
		if err := json.Unmarshal(e.Data, &d); err != nil || d.ID == "" {
			f.skip(e, "a feedback event that cannot be read", err)
			return nil, nil
		}
		var it item
		it.add("feedback."+d.ID, "application/json", d.Feedback)
		return []item{it}, nil
	}
	return nil, nil
}

// skip logs an event that can never be sent (it is not what this build wrote), which is then
// left out: retrying it would stop the stream for good.
func (f *Forwarder) skip(e eventlog.Event, what string, err error) {
	f.cfg.Logger.Error("forward: "+what+"; not sent", "event", e.ID, "type", e.Type, "seq", e.Seq, "err", err)
}

// runData is traces.RunData with the run's fields kept as sent.
type runData struct {
	Run  map[string]json.RawMessage `json:"run"`
	Blob *traces.Blob               `json:"blob"`
}

// runItem is the item of a run's post or patch: its main part, its big fields' parts, and its
// attachments' parts. nil (no error) when its payload or an attachment expired from the object
// store: that is logged, and the rest goes on.
func (f *Forwarder) runItem(ctx context.Context, e eventlog.Event, kind string) (*item, error) {
	var d runData
	if err := json.Unmarshal(e.Data, &d); err != nil {
		f.skip(e, "a run event that cannot be read", err)
		return nil, nil
	}
	run := d.Run
	if d.Blob != nil {
		raw, err := f.blobs.Get(ctx, d.Blob.Name)
		if errors.Is(err, eventlog.ErrNoObject) {
			f.cfg.Logger.Warn("forward: a run's payload expired from the trace object store; not sent", "event", e.ID, "blob", d.Blob.Name)
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("forward: read the payload of event %s: %w", e.ID, err)
		}
		if err := json.Unmarshal(raw, &run); err != nil {
			f.skip(e, "a run payload that cannot be read", err)
			return nil, nil
		}
	}
	var id string
	if err := json.Unmarshal(run["id"], &id); err != nil || id == "" {
		f.skip(e, "a run event without a run id", err)
		return nil, nil
	}
	id = strings.ToLower(id)
	f.setProject(run, kind)
	if kind == trace.KindPost {
		rootDottedOrder(run, id)
	}
	attachments, hasAttachments := run["attachments"]
	delete(run, "attachments")
	fields := map[string]json.RawMessage{}
	for _, name := range splitFields {
		if raw, ok := run[name]; ok {
			delete(run, name)
			if !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
				fields[name] = raw
			}
		}
	}
	main, err := json.Marshal(run)
	if err != nil {
		return nil, fmt.Errorf("forward: encode run %s: %w", id, err)
	}
	prefix := kind + "." + id
	var it item
	it.add(prefix, "application/json", main)
	if hasAttachments {
		if err := f.attachments(ctx, &it, e, id, attachments); err != nil {
			return nil, err
		}
	}
	for _, name := range splitFields {
		if raw, ok := fields[name]; ok {
			it.add(prefix+"."+name, "application/json", raw)
		}
	}
	return &it, nil
}

// setProject sends the run to Config.Project when it is set: the post names it (session_name),
// and neither a post nor a patch keeps the source's project id, which means nothing to the target.
func (f *Forwarder) setProject(run map[string]json.RawMessage, kind string) {
	if f.cfg.Project == "" {
		return
	}
	_, named := run["session_name"]
	_, byID := run["session_id"]
	delete(run, "session_id")
	if kind == trace.KindPost || named || byID {
		run["session_name"], _ = json.Marshal(f.cfg.Project)
	}
}

// rootDottedOrder gives a root run posted without a dotted_order (through /runs/batch, which
// does not require one) the one its start time and id make, which multipart ingestion requires.
func rootDottedOrder(run map[string]json.RawMessage, id string) {
	if raw, ok := run["dotted_order"]; ok && !bytes.Equal(raw, []byte("null")) {
		return
	}
	if raw, ok := run["parent_run_id"]; ok && !bytes.Equal(raw, []byte("null")) {
		return
	}
	var start any
	if err := json.Unmarshal(run["start_time"], &start); err != nil || start == nil {
		return
	}
	t, err := trace.ParseTime(start)
	if err != nil {
		return
	}
	run["dotted_order"], _ = json.Marshal(trace.FormatSegment(t, id))
	if _, ok := run["trace_id"]; !ok {
		run["trace_id"], _ = json.Marshal(id)
	}
}

// attachments adds the parts of a run's attachments (as its "attachments" field describes
// them), read from the trace object store; one that expired is left out.
func (f *Forwarder) attachments(ctx context.Context, it *item, e eventlog.Event, id string, raw json.RawMessage) error {
	var list map[string]trace.Attachment
	if err := json.Unmarshal(raw, &list); err != nil {
		f.skip(e, "attachments that cannot be read (the run is sent without them)", err)
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(list)) {
		a := list[name]
		data, err := f.blobs.Attachment(ctx, e.Aggregate.Tenant, a.Digest)
		if errors.Is(err, eventlog.ErrNoObject) {
			f.cfg.Logger.Warn("forward: an attachment expired from the trace object store; not sent", "run_id", id, "attachment", name)
			continue
		}
		if err != nil {
			return fmt.Errorf("forward: read attachment %s of run %s: %w", name, id, err)
		}
		ctype := a.MimeType
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		it.add("attachment."+id+"."+name, ctype, data)
	}
	return nil
}

// request is one ingestion request: the items of consecutive events.
type request []item

func (r request) size() int {
	n := 0
	for _, it := range r {
		n += it.size
	}
	return n
}

// chunk groups items into requests of at most maxItems items and maxBytes bytes (an item over
// maxBytes goes alone), in order.
func chunk(items []item, maxItems, maxBytes int) []request {
	var out []request
	var cur request
	size := 0
	for _, it := range items {
		if len(cur) > 0 && (len(cur) == maxItems || size+it.size > maxBytes) {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, it)
		size += it.size
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// quoteEscaper escapes a part's name in its Content-Disposition header.
var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"")

// body writes the request as a multipart/form-data body, each part with its length announced as
// the JS client does (Content-Type "...; length=N"), and returns it with its Content-Type.
func (r request) body() ([]byte, string, error) {
	var buf bytes.Buffer
	buf.Grow(r.size())
	w := multipart.NewWriter(&buf)
	for _, it := range r {
		for _, p := range it.parts {
			h := textproto.MIMEHeader{}
			h.Set("Content-Disposition", `form-data; name="`+quoteEscaper.Replace(p.name)+`"`)
			h.Set("Content-Type", p.ctype+"; length="+strconv.Itoa(len(p.data)))
			pw, err := w.CreatePart(h)
			if err != nil {
				return nil, "", err
			}
			if _, err := pw.Write(p.data); err != nil {
				return nil, "", err
			}
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}
