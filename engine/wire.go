package engine

// Values of the request fields that choose what a creation does, named so that a misspelt value
// does not compile.

// What a stateless run's temporary thread becomes once the run ends (on_completion).
const (
	OnCompletionDelete = "delete"
	OnCompletionKeep   = "keep"
)

// What creating a run on a thread that does not exist does (if_not_exists).
const (
	IfNotExistsReject = "reject"
	IfNotExistsCreate = "create"
)

// What the departure of a client waiting for a run does to the run (on_disconnect).
const (
	OnDisconnectCancel   = "cancel"
	OnDisconnectContinue = "continue"
)

// What creating a thread or an assistant whose id is taken does (if_exists).
const (
	IfExistsRaise     = "raise"
	IfExistsDoNothing = "do_nothing"
)
