package runs

// EndHooks are called as a wait starts taking its run's values (Taking), as a worker starts
// settling its run's end (Settling) and once it has (Settled); see results.
type EndHooks struct{ Taking, Settling, Settled func(run string) }

// SetEndHooks has the waits and workers of s call h: tests order them to reproduce a race
// deterministically.
func SetEndHooks(s *Service, h EndHooks) {
	s.results.mu.Lock()
	defer s.results.mu.Unlock()
	s.results.taking, s.results.settling, s.results.settled = h.Taking, h.Settling, h.Settled
}
