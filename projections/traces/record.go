package traces

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// A run's meta (tMeta) is metaV1, then its fields in a fixed order (see encodeMeta): varints,
// uvarint-length strings, the latency's float bits, detail maps with sorted keys, so that equal
// metas are equal bytes. (Run records: see runrecord.go.)
const metaV1 = 0x01

var errShortRecord = errors.New("truncated trace record")

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

// recReader reads the fields of a binary record, remembering the first problem.
type recReader struct {
	b   []byte
	bad bool
}

func (r *recReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > uint64(len(r.b)) { // every count and length is at most the bytes left
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recReader) string() string {
	l := r.uvarint()
	if l > uint64(len(r.b)) {
		r.bad, r.b = true, nil
		return ""
	}
	s := string(r.b[:l])
	r.b = r.b[l:]
	return s
}

func (r *recReader) sums() sums {
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
	r := &recReader{b: b[2:]}
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

func (r *recReader) flag() bool {
	if len(r.b) == 0 || r.b[0] > 1 {
		r.bad, r.b = true, nil
		return false
	}
	f := r.b[0] == 1
	r.b = r.b[1:]
	return f
}

func (r *recReader) bytes() []byte {
	l := r.uvarint()
	if l > uint64(len(r.b)) {
		r.bad, r.b = true, nil
		return nil
	}
	v := r.b[:l:l]
	r.b = r.b[l:]
	return v
}
