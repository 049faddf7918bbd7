package eventlog

// UnshareSubjects undoes ShareSubjects(kind, ...), for a test that shares a kind's subjects.
func UnshareSubjects(kind string) { delete(sharedSubjects, kind) }
