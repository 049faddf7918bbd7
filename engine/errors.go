// Package engine is the domain of jetgraph: the resources (threads, assistants, store items), the
// events that change them, and the one error type every layer speaks. It imports nothing else of
// jetgraph, so every other package may depend on it.
package engine

import (
	"errors"
	"fmt"
	"strings"
)

// Kind classifies an error by what the caller can do about it. The HTTP layer maps each kind to a
// status code in exactly one place (httpapi/errors.go).
type Kind int

// The kinds of error. Other is the zero value so an unclassified error is never mistaken for a
// client mistake.
const (
	Other        Kind = iota // an unexpected failure: 500
	Invalid                  // the request is malformed or violates a rule: 422
	NotFound                 // the resource does not exist: 404
	Exists                   // create of something that already exists: 409
	Conflict                 // a concurrent change or a busy resource won: 409
	TooLarge                 // the request or a value is over a size limit: 413
	Unavailable              // a dependency (log, projection) is not ready: 503
	BadRequest               // the request cannot be understood at all: 400
	Unauthorized             // the caller did not prove who it is (no or a wrong credential): 401
	Forbidden                // the caller is known but may not do this (act for another tenant): 403
)

func (k Kind) String() string {
	switch k {
	case Invalid:
		return "invalid"
	case NotFound:
		return "not found"
	case Exists:
		return "already exists"
	case Conflict:
		return "conflict"
	case TooLarge:
		return "too large"
	case Unavailable:
		return "unavailable"
	case BadRequest:
		return "bad request"
	case Unauthorized:
		return "unauthorized"
	case Forbidden:
		return "forbidden"
	}
	return "internal error"
}

// FieldError is one violation of a request's shape, in the FastAPI form the official clients
// understand: Loc is the path to the value (["body", "metadata"], ["path", "thread_id"]).
type FieldError struct {
	Loc  []any  `json:"loc"`
	Msg  string `json:"msg"`
	Type string `json:"type"`
}

// Error is the one error type of jetgraph. Op names the operation that failed ("threads.create"),
// Detail is the text a client may see, Fields lists every validation problem, and Err is the
// cause, which is logged but never shown to clients.
type Error struct {
	Op     string
	Kind   Kind
	Detail string
	Fields []FieldError
	Err    error
}

// E builds an *Error. Arguments are taken by type: an Op string is given with Op(), a Kind sets the
// kind, a string is the client-visible detail, a []FieldError the violations and an error the
// cause. A cause that is itself an *Error lends its kind and detail when none is given.
func E(args ...any) error {
	e := &Error{}
	for _, a := range args {
		switch v := a.(type) {
		case Op:
			e.Op = string(v)
		case Kind:
			e.Kind = v
		case string:
			e.Detail = v
		case []FieldError:
			e.Fields = v
		case error:
			e.Err = v
		default:
			panic(fmt.Sprintf("engine.E: unexpected argument %T", a))
		}
	}
	var inner *Error
	if errors.As(e.Err, &inner) {
		if e.Kind == Other {
			e.Kind = inner.Kind
		}
		if e.Detail == "" {
			e.Detail = inner.Detail
		}
		if e.Fields == nil {
			e.Fields = inner.Fields
		}
	}
	return e
}

// Op is the name of an operation, given to E.
type Op string

func (e *Error) Error() string {
	var b strings.Builder
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	switch {
	case e.Detail != "":
		b.WriteString(e.Detail)
	case len(e.Fields) > 0:
		for i, f := range e.Fields {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%v: %s", f.Loc, f.Msg)
		}
	default:
		b.WriteString(e.Kind.String())
	}
	if e.Err != nil && e.Detail != e.Err.Error() {
		var inner *Error
		if !errors.As(e.Err, &inner) || inner.Detail != e.Detail {
			b.WriteString(": ")
			b.WriteString(e.Err.Error())
		}
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of the first *Error in err's chain, or Other.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		for e.Kind == Other {
			var inner *Error
			if !errors.As(e.Err, &inner) {
				break
			}
			e = inner
		}
		return e.Kind
	}
	return Other
}

// Is reports whether err is an *Error of kind k.
func Is(k Kind, err error) bool { return err != nil && KindOf(err) == k }

// Violations collects field errors so that a request reports every problem at once.
type Violations []FieldError

// Add records a problem at loc.
func (v *Violations) Add(typ, msg string, loc ...any) {
	*v = append(*v, FieldError{Loc: loc, Msg: msg, Type: typ})
}

// Err returns an Invalid error listing the violations, or nil when there are none.
func (v Violations) Err(op string) error {
	if len(v) == 0 {
		return nil
	}
	return E(Op(op), Invalid, []FieldError(v))
}
