package crons_test

import (
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine/crons"
)

func TestParseSchedule(t *testing.T) {
	from := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC) // a Tuesday
	cases := []struct {
		name, spec, tz string
		next           string // the first tick after from, RFC 3339 in UTC; "" for an error
	}{
		{"five fields, UTC", "30 14 * * *", "", "2026-03-10T14:30:00Z"},
		{"seconds field", "*/15 * * * * *", "", "2026-03-10T12:00:15Z"},
		{"descriptor", "@hourly", "", "2026-03-10T13:00:00Z"},
		{"every", "@every 90s", "", "2026-03-10T12:01:30Z"},
		{"timezone field", "0 9 * * *", "Asia/Tokyo", "2026-03-11T00:00:00Z"},
		{"CRON_TZ prefix", "CRON_TZ=America/New_York 0 9 * * *", "", "2026-03-10T13:00:00Z"},
		{"CRON_TZ prefix and the same timezone", "CRON_TZ=Europe/Paris 0 9 * * *", "Europe/Paris", "2026-03-11T08:00:00Z"},
		{"day of week", "0 8 * * 1", "", "2026-03-16T08:00:00Z"},
		{"out of range", "61 * * * *", "", ""},
		{"too few fields", "* *", "", ""},
		{"empty", " ", "", ""},
		{"unknown zone", "0 9 * * *", "Mars/Olympus", ""},
		{"a zone and no fields", "CRON_TZ=UTC", "", ""},
		{"a zone and no fields, with timezone", "CRON_TZ=UTC", "UTC", ""},
		{"prefix and another timezone", "CRON_TZ=Europe/Paris 0 9 * * *", "Asia/Tokyo", ""},
		{"every second", "@every 1s", "", "2026-03-10T12:00:01Z"},
		{"every, with a zone", "CRON_TZ=UTC @every 2m", "", "2026-03-10T12:02:00Z"},
		{"every zero", "@every 0s", "", ""},
		{"every negative", "@every -1s", "", ""},
		{"every nanosecond", "@every 1ns", "", ""},
		{"every below a second", "@every 999ms", "", ""},
		{"every fraction of a second", "@every 1500ms", "", ""},
		{"every zero, with a zone", "CRON_TZ=UTC @every 0s", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := crons.ParseSchedule(tc.spec, tc.tz)
			if tc.next == "" {
				if err == nil {
					t.Fatalf("ParseSchedule(%q, %q) accepted", tc.spec, tc.tz)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			n, ok := s.Next(from)
			if !ok || n.Format(time.RFC3339) != tc.next {
				t.Errorf("next %v (%v), want %s", n.Format(time.RFC3339), ok, tc.next)
			}
		})
	}
}

func TestLatestTick(t *testing.T) {
	s, err := crons.ParseSchedule("* * * * * *", "")
	if err != nil {
		t.Fatal(err)
	}
	tick := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		now         time.Duration
		want        time.Duration
		wantSkipped int
	}{
		{0, 0, 0},
		{900 * time.Millisecond, 0, 0},
		{time.Second, time.Second, 1},
		{10*time.Second + 500*time.Millisecond, 10 * time.Second, 10},
	}
	for _, tc := range cases {
		got, skipped := s.Latest(tick, tick.Add(tc.now))
		if !got.Equal(tick.Add(tc.want)) || skipped != tc.wantSkipped {
			t.Errorf("now +%v: latest +%v skipped %d, want +%v and %d", tc.now, got.Sub(tick), skipped, tc.want, tc.wantSkipped)
		}
	}
}

func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{"* * * * *", "*/5 * * * * *", "@every 1s", "CRON_TZ=UTC 0 0 * * *", "0 0 30 2 *"} {
		f.Add(s, "")
	}
	f.Add("0 9 * * *", "Europe/Paris")
	f.Fuzz(func(t *testing.T, spec, tz string) {
		s, err := crons.ParseSchedule(spec, tz)
		if err != nil {
			return
		}
		from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		if n, ok := s.Next(from); ok && !n.After(from) {
			t.Fatalf("next %v is not after %v", n, from)
		}
	})
}
