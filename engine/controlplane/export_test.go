package controlplane

// SetBeforeCommit makes s call f between a command's read of the state and its append, so that
// a test can land another writer's event there (a real version conflict on the log).
func SetBeforeCommit(s *Service, f func(op string)) { s.beforeCommit = f }
