package traces

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/jetgraph/jetgraph/engine/tracing/trace"
)

// A run record (tRuns) is recordV1, then the run's own fields, those trace.Apply merges: the
// fields trace.Derive computes from them are not stored, since every reader derives them again
// (TraceView.Run; the fold after merging). In order:
//
//   - strings, each a uvarint length and its bytes: id, trace_id, dotted_order, name,
//     run_type, session_id, session_name;
//   - optional strings (a byte 0 or 1, then the string): parent_run_id, error,
//     reference_example_id;
//   - start_time and end_time: a byte 0 or 1, then unix microseconds (varint): times keep the
//     microseconds the runs' JSON has;
//   - tags and patched_fields: a count, then the strings;
//   - attachments: a count, then by name in order: name, mime type, size (varint), digest;
//   - JSON sections, each a uvarint length and its text (empty: none): extra, events,
//     inputs, outputs. Inputs and outputs are the text they were decoded from when the run
//     has it (the client's), so that it is never encoded again.
//
// What reads back is what the run's JSON form read back before: absent inputs and extra are
// {}, absent events and tags empty lists.
const recordV1 = 0x01

// encodeRunRecord writes a run record. inputs and outputs are r's inputs and outputs as JSON
// text, or nil to encode r's decoded ones.
func encodeRunRecord(r *trace.Run, inputs, outputs []byte) ([]byte, error) {
	var extra, events []byte
	var err error
	encode := func(dst *[]byte, v any, what string) {
		if err == nil {
			if *dst, err = trace.EncodeValue(v); err != nil {
				err = fmt.Errorf("encode %s of run %s: %w", what, r.ID, err)
			}
		}
	}
	if inputs == nil && len(r.Inputs) > 0 { // (none and {} both read back as {})
		encode(&inputs, r.Inputs, "inputs")
	}
	if outputs == nil && r.Outputs != nil {
		encode(&outputs, r.Outputs, "outputs")
	}
	if len(r.Extra) > 0 {
		encode(&extra, r.Extra, "extra")
	}
	if len(r.Events) > 0 {
		encode(&events, r.Events, "events")
	}
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 256+len(r.DottedOrder)+len(extra)+len(events)+len(inputs)+len(outputs))
	b = append(b, recordV1)
	for _, s := range []string{r.ID, r.TraceID, r.DottedOrder, r.Name, r.RunType, r.SessionID, r.SessionName} {
		b = appendString(b, s)
	}
	for _, s := range []*string{r.ParentRunID, r.Error, r.ReferenceExampleID} {
		if s == nil {
			b = append(b, 0)
		} else {
			b = appendString(append(b, 1), *s)
		}
	}
	for _, t := range []*time.Time{&r.StartTime, r.EndTime} {
		if t == nil || t.IsZero() {
			b = append(b, 0)
		} else {
			b = binary.AppendVarint(append(b, 1), t.UnixMicro())
		}
	}
	for _, list := range [][]string{r.Tags, r.Patched} {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, s := range list {
			b = appendString(b, s)
		}
	}
	names := make([]string, 0, len(r.Attachments))
	for name := range r.Attachments {
		names = append(names, name)
	}
	slices.Sort(names)
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, name := range names {
		a := r.Attachments[name]
		b = binary.AppendVarint(appendString(appendString(b, name), a.MimeType), a.Size)
		b = appendString(b, a.Digest)
	}
	for _, s := range [][]byte{extra, events, inputs, outputs} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b, nil
}

// runSections are the JSON sections of a run record.
type runSections struct{ extra, events, inputs, outputs []byte }

// readRunRecordFields reads a run record's fields but its JSON sections into r, which it returns.
func readRunRecordFields(b []byte, r *trace.Run) (runSections, error) {
	var sec runSections
	if len(b) == 0 || b[0] != recordV1 {
		return sec, fmt.Errorf("trace run record of unknown format")
	}
	rd := &recReader{b: b[1:]}
	for _, s := range []*string{&r.ID, &r.TraceID, &r.DottedOrder, &r.Name, &r.RunType, &r.SessionID, &r.SessionName} {
		*s = rd.string()
	}
	for _, s := range []**string{&r.ParentRunID, &r.Error, &r.ReferenceExampleID} {
		if rd.flag() {
			v := rd.string()
			*s = &v
		}
	}
	if rd.flag() {
		r.StartTime = time.UnixMicro(rd.varint()).UTC()
	}
	if rd.flag() {
		t := time.UnixMicro(rd.varint()).UTC()
		r.EndTime = &t
	}
	r.Tags = make([]string, rd.uvarint())
	for i := range r.Tags {
		r.Tags[i] = rd.string()
	}
	if n := rd.uvarint(); n > 0 {
		r.Patched = make([]string, n)
		for i := range r.Patched {
			r.Patched[i] = rd.string()
		}
	}
	if n := rd.uvarint(); n > 0 {
		r.Attachments = make(map[string]trace.Attachment, n)
		for range n {
			name := rd.string()
			a := trace.Attachment{MimeType: rd.string(), Size: rd.varint(), Digest: rd.string()}
			r.Attachments[name] = a
		}
	}
	for _, s := range []*[]byte{&sec.extra, &sec.events, &sec.inputs, &sec.outputs} {
		*s = rd.bytes()
	}
	if rd.bad || len(rd.b) != 0 {
		return sec, errShortRecord
	}
	return sec, nil
}

// decodeRunRecord reads a run record into r. The text of its inputs and outputs is returned
// beside their values (it shares memory with b).
func decodeRunRecord(b []byte, r *trace.Run) (textSource, error) {
	var src textSource
	sec, err := readRunRecordFields(b, r)
	if err != nil {
		return src, err
	}
	r.Inputs, r.Extra, r.Events = map[string]any{}, map[string]any{}, []map[string]any{}
	if len(sec.extra) > 0 {
		if err := trace.DecodeObject(sec.extra, &r.Extra); err != nil {
			return src, fmt.Errorf("decode extra of trace run %s: %w", r.ID, err)
		}
	}
	if len(sec.events) > 0 {
		var list any
		if err := trace.DecodeValue(sec.events, &list); err != nil {
			return src, fmt.Errorf("decode events of trace run %s: %w", r.ID, err)
		}
		items, _ := list.([]any)
		r.Events = make([]map[string]any, len(items))
		for i, e := range items {
			r.Events[i], _ = e.(map[string]any)
		}
	}
	src = textSource{values: make(map[string]any, 2), text: make(map[string][]byte, 2)}
	if len(sec.inputs) > 0 {
		if err := trace.DecodeObject(sec.inputs, &r.Inputs); err != nil {
			return src, fmt.Errorf("decode inputs of trace run %s: %w", r.ID, err)
		}
		src.values["inputs"], src.text["inputs"] = r.Inputs, sec.inputs
	}
	if len(sec.outputs) > 0 {
		if err := trace.DecodeObject(sec.outputs, &r.Outputs); err != nil {
			return src, fmt.Errorf("decode outputs of trace run %s: %w", r.ID, err)
		}
		src.values["outputs"], src.text["outputs"] = r.Outputs, sec.outputs
	}
	return src, nil
}
