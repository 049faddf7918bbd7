package projections

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/jetgraph/jetgraph/engine/trace"
)

// Stored forms of the trace projection's records, both led by a format byte.
//
// A run (tRuns) is recordV1, then three sections, each a uvarint length and its bytes: the
// trace.Run JSON without inputs, outputs and normalised messages (its "inputs" reads {} and its
// "outputs" null), then the inputs and the outputs as JSON text, as the client sent them when
// they came from the client unchanged (empty: none). Keeping the client's text spares encoding
// the decoded values again; readers decode it to the same values.
//
// A run's meta (tMeta) is metaV1, then its fields in a fixed order (see appendMeta): varints,
// uvarint-length strings, the latency's float bits, detail maps with sorted keys, so that equal
// metas are equal bytes.
const (
	recordV1 = 0x01
	metaV1   = 0x01
)

var errShortRecord = errors.New("truncated trace record")

// encodeRunRecord writes a run record. inputs and outputs are r's inputs and outputs as JSON text,
// or nil to encode r's decoded ones.
func encodeRunRecord(r *trace.Run, inputs, outputs []byte) ([]byte, error) {
	var err error
	if inputs == nil && len(r.Inputs) > 0 { // (none and {} both read back as {})
		if inputs, err = json.Marshal(r.Inputs); err != nil {
			return nil, fmt.Errorf("encode inputs of run %s: %w", r.ID, err)
		}
	}
	if outputs == nil && r.Outputs != nil {
		if outputs, err = json.Marshal(r.Outputs); err != nil {
			return nil, fmt.Errorf("encode outputs of run %s: %w", r.ID, err)
		}
	}
	head := *r
	head.Inputs, head.Outputs = nil, nil
	head.InputMessages, head.OutputMessages, head.MessageProblems = nil, nil, nil
	h, err := head.MarshalJSON() // not json.Marshal: that would scan the result once more
	if err != nil {
		return nil, fmt.Errorf("encode run %s: %w", r.ID, err)
	}
	b := make([]byte, 0, 1+3*binary.MaxVarintLen32+len(h)+len(inputs)+len(outputs))
	b = append(b, recordV1)
	for _, s := range [][]byte{h, inputs, outputs} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b, nil
}

// splitRun returns the three sections of a run record.
func splitRun(b []byte) (head, inputs, outputs []byte, err error) {
	if len(b) == 0 || b[0] != recordV1 {
		return nil, nil, nil, fmt.Errorf("trace run record of unknown format")
	}
	b = b[1:]
	var parts [3][]byte
	for i := range parts {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return nil, nil, nil, errShortRecord
		}
		parts[i], b = b[n:n+int(l)], b[n+int(l):]
	}
	return parts[0], parts[1], parts[2], nil
}

// decodeRunRecord reads a run record into r. The text of its inputs and outputs is returned
// beside their values (it shares memory with b).
func decodeRunRecord(b []byte, r *trace.Run) (textSource, error) {
	var src textSource
	head, inputs, outputs, err := splitRun(b)
	if err != nil {
		return src, err
	}
	if err := json.Unmarshal(head, r); err != nil {
		return src, fmt.Errorf("decode trace run: %w", err)
	}
	src = textSource{values: make(map[string]any, 2), text: make(map[string][]byte, 2)}
	if len(inputs) > 0 {
		r.Inputs = nil
		if err := trace.DecodeObject(inputs, &r.Inputs); err != nil {
			return src, fmt.Errorf("decode inputs of trace run %s: %w", r.ID, err)
		}
		src.values["inputs"], src.text["inputs"] = r.Inputs, inputs
	}
	if len(outputs) > 0 {
		if err := trace.DecodeObject(outputs, &r.Outputs); err != nil {
			return src, fmt.Errorf("decode outputs of trace run %s: %w", r.ID, err)
		}
		src.values["outputs"], src.text["outputs"] = r.Outputs, outputs
	}
	return src, nil
}

// Flags of a stored meta.
const (
	metaPosted = 1 << iota
	metaError
	metaLatency
)

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// encodeMeta writes a run's meta.
func encodeMeta(m runMeta) []byte {
	b := make([]byte, 0, 96+len(m.Project)+len(m.Trace)+len(m.Ancestors)*40)
	b = append(b, metaV1)
	var flags byte
	if m.Posted {
		flags |= metaPosted
	}
	if m.Error {
		flags |= metaError
	}
	if m.Latency != nil {
		flags |= metaLatency
	}
	b = append(b, flags)
	b = appendString(b, m.Project)
	b = binary.AppendVarint(b, m.Start)
	b = appendString(b, m.Trace)
	b = binary.AppendUvarint(b, uint64(len(m.Ancestors)))
	for _, a := range m.Ancestors {
		b = appendString(b, a)
	}
	if m.Latency != nil {
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(*m.Latency))
	}
	return appendSums(appendSums(b, m.Own), m.Desc)
}

func appendSums(b []byte, s sums) []byte {
	for _, v := range []int64{s.Prompt, s.Completion, s.Total, s.PromptCost, s.CompCost, s.TotalCost, s.Costed, s.FirstToken} {
		b = binary.AppendVarint(b, v)
	}
	for _, d := range []map[string]int64{s.PromptDetails, s.CompDetails} {
		b = binary.AppendUvarint(b, uint64(len(d)))
		keys := make([]string, 0, len(d))
		for k := range d {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			b = binary.AppendVarint(appendString(b, k), d[k])
		}
	}
	return b
}

// metaReader reads the fields encodeMeta wrote, remembering the first problem.
type metaReader struct {
	b   []byte
	bad bool
}

func (r *metaReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *metaReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > uint64(len(r.b)) { // every count and length is at most the bytes left
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *metaReader) string() string {
	l := r.uvarint()
	if l > uint64(len(r.b)) {
		r.bad, r.b = true, nil
		return ""
	}
	s := string(r.b[:l])
	r.b = r.b[l:]
	return s
}

func (r *metaReader) sums() sums {
	var s sums
	for _, v := range []*int64{&s.Prompt, &s.Completion, &s.Total, &s.PromptCost, &s.CompCost, &s.TotalCost, &s.Costed, &s.FirstToken} {
		*v = r.varint()
	}
	for _, d := range []*map[string]int64{&s.PromptDetails, &s.CompDetails} {
		n := r.uvarint()
		if n == 0 {
			continue
		}
		*d = make(map[string]int64, n)
		for range n {
			k := r.string()
			(*d)[k] = r.varint()
		}
	}
	return s
}

// decodeMeta reads a meta encodeMeta wrote.
func decodeMeta(b []byte) (runMeta, error) {
	var m runMeta
	if len(b) < 2 || b[0] != metaV1 {
		return m, fmt.Errorf("trace run meta of unknown format")
	}
	flags := b[1]
	r := &metaReader{b: b[2:]}
	m.Posted, m.Error = flags&metaPosted != 0, flags&metaError != 0
	m.Project = r.string()
	m.Start = r.varint()
	m.Trace = r.string()
	if n := r.uvarint(); n > 0 {
		m.Ancestors = make([]string, n)
		for i := range m.Ancestors {
			m.Ancestors[i] = r.string()
		}
	}
	if flags&metaLatency != 0 {
		if len(r.b) < 8 {
			return m, errShortRecord
		}
		l := math.Float64frombits(binary.BigEndian.Uint64(r.b))
		m.Latency, r.b = &l, r.b[8:]
	}
	m.Own, m.Desc = r.sums(), r.sums()
	if r.bad || len(r.b) != 0 {
		return m, errShortRecord
	}
	return m, nil
}
