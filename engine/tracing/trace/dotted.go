package trace

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// segmentTimeLayout is the time part of a dotted_order segment without its six fraction digits
// and the trailing Z: YYYYMMDDTHHMMSS.
const segmentTimeLayout = "20060102T150405"

// segmentLen is the length of one dotted_order segment: 22 characters of time
// (YYYYMMDDTHHMMSSffffffZ) and a 36-character UUID.
const segmentLen = 22 + 36

// Segment is one element of a dotted_order: the start time of a run and its id.
type Segment struct {
	Time time.Time
	ID   string
}

// String formats s as the clients do: YYYYMMDDTHHMMSSffffffZ<uuid>, in UTC.
func (s Segment) String() string { return FormatSegment(s.Time, s.ID) }

// FormatSegment returns the dotted_order segment of a run that started at t with id id. A root's
// dotted_order is its one segment; a child's is its parent's dotted_order, ".", its segment.
func FormatSegment(t time.Time, id string) string {
	t = t.UTC()
	return fmt.Sprintf("%s%06dZ%s", t.Format(segmentTimeLayout), t.Nanosecond()/1000, strings.ToLower(id))
}

// ParseDottedOrder splits a dotted_order into its segments, root first, and checks that each is
// well-formed: YYYYMMDDTHHMMSSffffffZ followed by a UUID.
func ParseDottedOrder(s string) ([]Segment, error) {
	if s == "" {
		return nil, fmt.Errorf("empty dotted_order")
	}
	parts := strings.Split(s, ".")
	segs := make([]Segment, 0, len(parts))
	for i, p := range parts {
		seg, err := parseSegment(p)
		if err != nil {
			return nil, fmt.Errorf("segment %d: %w", i, err)
		}
		segs = append(segs, seg)
	}
	return segs, nil
}

func parseSegment(p string) (Segment, error) {
	if len(p) != segmentLen {
		return Segment{}, fmt.Errorf("%q is %d characters long, want %d (YYYYMMDDTHHMMSSffffffZ<uuid>)", p, len(p), segmentLen)
	}
	t, err := time.Parse(segmentTimeLayout, p[:15])
	if err != nil {
		return Segment{}, fmt.Errorf("%q: bad time: want YYYYMMDDTHHMMSS", p[:15])
	}
	frac := p[15:21]
	micros := 0
	for _, c := range frac {
		if c < '0' || c > '9' {
			return Segment{}, fmt.Errorf("%q: want six digits of microseconds", frac)
		}
		micros = micros*10 + int(c-'0')
	}
	if p[21] != 'Z' {
		return Segment{}, fmt.Errorf("want Z after the time, got %q", p[21:22])
	}
	id := p[22:]
	if !IsUUID(id) {
		return Segment{}, fmt.Errorf("%q is not a UUID", id)
	}
	return Segment{Time: t.Add(time.Duration(micros) * time.Microsecond), ID: strings.ToLower(id)}, nil
}

// IsUUID reports whether s is a UUID in its canonical 8-4-4-4-12 hexadecimal form (any version,
// either case).
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// ancestorsOf returns the ids of a run's ancestors, root first: from its dotted_order when it has
// one, else its parent alone. It is never nil.
func ancestorsOf(r *Run) []string {
	if r.DottedOrder != "" {
		if segs, err := ParseDottedOrder(r.DottedOrder); err == nil {
			ids := make([]string, 0, len(segs)-1)
			for _, s := range segs[:len(segs)-1] {
				ids = append(ids, s.ID)
			}
			return ids
		}
	}
	if r.ParentRunID != nil && *r.ParentRunID != "" {
		return []string{*r.ParentRunID}
	}
	return []string{}
}

// sortKey orders runs: the dotted_order when there is one, else the segment the run would have as
// a root, so that every pair of runs compares consistently.
func sortKey(r *Run) string {
	if r.DottedOrder != "" {
		return r.DottedOrder
	}
	return FormatSegment(r.StartTime, r.ID)
}

// SortByDottedOrder sorts runs into execution order: by dotted_order, which sorts a parent before
// its children and siblings by start time. Runs without a dotted_order sort by start time as if
// they were roots; ties go by id.
func SortByDottedOrder(runs []*Run) {
	sort.SliceStable(runs, func(i, j int) bool {
		ki, kj := sortKey(runs[i]), sortKey(runs[j])
		if ki != kj {
			return ki < kj
		}
		return runs[i].ID < runs[j].ID
	})
}
