package engine

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestRunErrorIsAnErrorWithItsCause(t *testing.T) {
	cause := E(Op("node"), Invalid, "bad input")
	re := &RunError{Class: "ValueError", Message: "bad input", Cause: cause}
	var err error = re
	if err.Error() != "ValueError: bad input" {
		t.Errorf("Error() = %q", err.Error())
	}
	var e *Error
	if !errors.As(err, &e) || e != cause {
		t.Error("errors.As does not reach the cause through Unwrap")
	}
	raw, _ := json.Marshal(re)
	if string(raw) != `{"error":"ValueError","message":"bad input"}` {
		t.Errorf("JSON = %s, want the wire form without the cause", raw)
	}
	var back RunError
	if err := json.Unmarshal(raw, &back); err != nil || back.Class != "ValueError" || back.Message != "bad input" || back.Unwrap() != nil {
		t.Errorf("read back %+v, %v", back, err)
	}
}
