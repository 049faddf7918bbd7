package crons

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// parser reads the five fields of standard cron (minute hour day-of-month month day-of-week), an
// optional leading seconds field, the @-descriptors (@hourly, @every 10s) and a CRON_TZ= or TZ=
// prefix; robfig/cron/v3 does the parsing.
var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// maxCatchUp bounds the missed ticks walked over to find the latest one: a process down for
// longer than this many ticks fires the tick it reached (still in the past) and the next scan
// goes on from there.
const maxCatchUp = 1 << 20

// minEvery is the shortest interval of @every: robfig/cron/v3 takes a shorter one (0s, -1s, 1ns)
// as a second, and drops the fraction of a longer one, so such a cron would fire at another pace
// than it says.
const minEvery = time.Second

// everyPrefix starts an interval schedule, as robfig/cron/v3 reads it.
const everyPrefix = "@every "

// Schedule is a parsed cron schedule in its time zone.
type Schedule struct{ s cron.Schedule }

// ParseSchedule parses spec in the time zone named tz (an IANA name; "" is UTC, unless spec
// carries its own CRON_TZ= prefix, which then wins over UTC). A spec with a prefix and a tz
// naming another zone is refused: one of them would be ignored.
func ParseSchedule(spec, tz string) (Schedule, error) {
	if err := checkEvery(spec); err != nil {
		return Schedule{}, err
	}
	return parseSchedule(spec, tz)
}

// checkEvery refuses an @every interval that is not a whole number of seconds, at least minEvery.
// Other schedules, and intervals robfig/cron/v3 cannot read, are left to the parser.
func checkEvery(spec string) error {
	body := strings.TrimSpace(spec)
	if strings.HasPrefix(body, "CRON_TZ=") || strings.HasPrefix(body, "TZ=") {
		_, body, _ = strings.Cut(body, " ")
		body = strings.TrimSpace(body)
	}
	rest, ok := strings.CutPrefix(body, everyPrefix)
	if !ok {
		return nil
	}
	d, err := time.ParseDuration(rest)
	if err != nil {
		return nil
	}
	if d < minEvery || d%time.Second != 0 {
		return fmt.Errorf("the interval of @every must be a whole number of seconds and at least %v (minEvery), not %v", minEvery, d)
	}
	return nil
}

// parseSchedule is ParseSchedule without the interval limit: the scheduler reads with it the
// schedules stored before the limit, which fire as they always did until changed or deleted.
func parseSchedule(spec, tz string) (Schedule, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return Schedule{}, fmt.Errorf("the schedule is empty")
	}
	hasTZ := strings.HasPrefix(spec, "CRON_TZ=") || strings.HasPrefix(spec, "TZ=")
	if hasTZ && !strings.ContainsAny(spec, " \t") {
		// robfig/cron/v3 slices a prefix up to its space: without one it panics.
		return Schedule{}, fmt.Errorf("the schedule has a time zone and no fields")
	}
	if tz != "" {
		if _, err := time.LoadLocation(tz); err != nil {
			return Schedule{}, fmt.Errorf("unknown time zone %q", tz)
		}
		if hasTZ {
			zone, _, _ := strings.Cut(strings.SplitN(spec, "=", 2)[1], " ")
			if zone != tz {
				return Schedule{}, fmt.Errorf("the schedule's %s and the timezone %q disagree", strings.Fields(spec)[0], tz)
			}
		} else {
			spec = "CRON_TZ=" + tz + " " + spec
		}
	} else if !hasTZ {
		spec = "CRON_TZ=UTC " + spec
	}
	s, err := parser.Parse(spec)
	if err != nil {
		return Schedule{}, err
	}
	return Schedule{s: s}, nil
}

// Next returns the first tick strictly after t, or false when there is none (robfig's zero
// time: a date that never comes, such as February 30th).
func (s Schedule) Next(t time.Time) (time.Time, bool) {
	n := s.s.Next(t)
	return n.UTC(), !n.IsZero()
}

// Latest returns the latest tick at or before now, starting from tick (which is at or before
// now), and how many ticks before it were passed over.
func (s Schedule) Latest(tick, now time.Time) (time.Time, int) {
	skipped := 0
	for skipped < maxCatchUp {
		n, ok := s.Next(tick)
		if !ok || n.After(now) {
			break
		}
		tick = n
		skipped++
	}
	return tick, skipped
}
