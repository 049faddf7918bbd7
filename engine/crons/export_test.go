package crons

import "time"

// SetClock makes the scheduler read the time from now (tests of catch-up).
func (s *Service) SetClock(now func() time.Time) { s.now = now }
