package runs

// SetEndHooks has the waits of s call taking as they start taking their run's values, and its
// workers call settling as they start settling their run's end (see results): tests order the
// two to reproduce a race deterministically.
func SetEndHooks(s *Service, taking, settling func(run string)) {
	s.results.mu.Lock()
	defer s.results.mu.Unlock()
	s.results.taking, s.results.settling = taking, settling
}
