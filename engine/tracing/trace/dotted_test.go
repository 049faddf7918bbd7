package trace

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseDottedOrder(t *testing.T) {
	tests := []struct {
		in      string
		ids     []string
		wantErr string
	}{
		{rootDotted, []string{rootID}, ""},
		{childDotted, []string{rootID, childID}, ""},
		{"20260301T120000123456Z" + strings.ToUpper(rootID), []string{rootID}, ""},
		{"", nil, "empty"},
		{"20260301T120000123456Z" + rootID + ".", nil, "segment 1"},
		{"20260301T120000123456" + rootID, nil, "characters long"},
		{"20260301X120000123456Z" + rootID, nil, "bad time"},
		{"20261301T120000123456Z" + rootID, nil, "bad time"},
		{"20260301T12000012345aZ" + rootID, nil, "six digits"},
		{"20260301T120000123456Y" + rootID, nil, "want Z"},
		{"20260301T120000123456Z" + strings.Replace(rootID, "-", "x", 1), nil, "not a UUID"},
		{rootDotted + ".20260301T120000123456Z" + "019a0000-0000-7000-8000-00000000000g", nil, "segment 1"},
	}
	for _, tc := range tests {
		segs, err := ParseDottedOrder(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseDottedOrder(%q) error = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseDottedOrder(%q): %v", tc.in, err)
			continue
		}
		var ids []string
		for _, s := range segs {
			ids = append(ids, s.ID)
		}
		if !reflect.DeepEqual(ids, tc.ids) {
			t.Errorf("ParseDottedOrder(%q) ids = %v, want %v", tc.in, ids, tc.ids)
		}
	}
	segs, _ := ParseDottedOrder(childDotted)
	if !segs[0].Time.Equal(t0) || !segs[1].Time.Equal(t0.Add(time.Millisecond)) || segs[1].String() != childDotted[len(rootDotted)+1:] {
		t.Errorf("segment times %v %v", segs[0].Time, segs[1].Time)
	}
	if got := FormatSegment(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.FixedZone("x", 3600)), rootID); got != "20260102T020405000006Z"+rootID {
		t.Errorf("FormatSegment = %s", got)
	}
}

func TestSortAndAncestors(t *testing.T) {
	grandDotted := childDotted + "." + FormatSegment(t0.Add(2*time.Millisecond), grandID)
	sibling := "019a0000-0000-7000-8000-000000000004"
	sibDotted := rootDotted + "." + FormatSegment(t0.Add(5*time.Millisecond), sibling)
	runs := []*Run{
		{ID: sibling, DottedOrder: sibDotted},
		{ID: grandID, DottedOrder: grandDotted},
		{ID: "019a0000-0000-7000-8000-000000000009", StartTime: t0.Add(-time.Hour)}, // no dotted_order: a root by start time
		{ID: rootID, DottedOrder: rootDotted},
		{ID: childID, DottedOrder: childDotted},
	}
	SortByDottedOrder(runs)
	var order []string
	for _, r := range runs {
		order = append(order, r.ID[len(r.ID)-1:])
	}
	if strings.Join(order, "") != "91234" {
		t.Errorf("order = %v, want 9 1 2 3 4", order)
	}
	for _, r := range runs {
		Derive(r, nil)
	}
	if !reflect.DeepEqual(runs[3].ParentRunIDs, []string{rootID, childID}) || len(runs[1].ParentRunIDs) != 0 || runs[1].ParentRunIDs == nil {
		t.Errorf("parent_run_ids: grandchild %v root %v", runs[3].ParentRunIDs, runs[1].ParentRunIDs)
	}
	if !runs[1].IsRoot() || runs[2].IsRoot() {
		t.Error("IsRoot")
	}
	// Without a dotted_order, the parent alone.
	p := rootID
	r := &Run{ID: childID, ParentRunID: &p}
	Derive(r, nil)
	if !reflect.DeepEqual(r.ParentRunIDs, []string{rootID}) {
		t.Errorf("parent_run_ids = %v", r.ParentRunIDs)
	}
}
