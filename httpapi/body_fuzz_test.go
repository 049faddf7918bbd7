package httpapi

import (
	"bytes"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/labstack/echo/v4"
)

// FuzzReadBody: any body under any content type is decoded or refused without panicking, and a
// refusal is a client error: a read error maps to a 4xx status, and every recorded problem has a
// type, a message and a location, as the 422 lists them. Every field reader then reads every
// field of what was decoded without panicking either.
func FuzzReadBody(f *testing.F) {
	for _, seed := range []struct{ body, ctype string }{
		{`{"metadata":{"a":1},"limit":10,"if_exists":"do_nothing","ids":["x"],"thread_id":"019a0000-0000-7000-8000-000000000001"}`, "application/json"},
		{`null`, "application/json"}, {`[1,2]`, ""}, {"{\"a\":\"\xff\"}", "text/plain"}, {`{"limit":"10"}`, "application/merge-patch+json"},
		{`a=b`, "application/x-www-form-urlencoded"}, {` `, "application/json; charset=utf-8"}, {`{"a":1e999}`, "application/json"},
	} {
		f.Add([]byte(seed.body), seed.ctype)
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body []byte, ctype string) {
		req := httptest.NewRequest("POST", "/threads/search", bytes.NewReader(body))
		req.Header.Set(echo.HeaderContentType, ctype)
		c := e.NewContext(req, httptest.NewRecorder())
		c.SetPath("/threads/search")
		var errs engine.Violations
		flds, err := ReadBody(c, &errs)
		if err != nil {
			if code := status(engine.KindOf(err)); code < 400 || code > 499 {
				t.Fatalf("body %q (%q): error %v maps to %d, not a client error", body, ctype, err, code)
			}
			return
		}
		keys := make([]string, 0, len(flds.raw))
		for k := range flds.raw {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			flds.String(k)
			flds.Enum(k, "a", "a", "b")
			flds.UUID(k)
			flds.Object(k)
			flds.Any(k)
			flds.Int(k, 0, 0)
			flds.Number(k)
			flds.Bool(k, false)
			flds.Strings(k)
		}
		flds.Limit(10, 1)
		for _, v := range errs {
			if v.Type == "" || v.Msg == "" || len(v.Loc) == 0 {
				t.Fatalf("body %q (%q): a problem without its type, message or location: %+v", body, ctype, v)
			}
		}
		if verr := errs.Err("fuzz"); verr != nil && status(engine.KindOf(verr)) != 422 {
			t.Fatalf("problems answered %d, want 422", status(engine.KindOf(verr)))
		}
	})
}

// FuzzCheckMCPMessage: any body is classified without panicking: passed on (code 0), accepted
// and dropped (202), or refused with a JSON-RPC error code and a message.
func FuzzCheckMCPMessage(f *testing.F) {
	for _, seed := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","method":"x"}`, `[]`, `[{}]`,
		`{"jsonrpc":"2.0","id":[],"method":1}`, `{"jsonrpc":"2.0","id":1,"result":{}}`, `nul`, ""} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		status, _, code, msg := checkMCPMessage(body)
		switch {
		case code == 0 && (status == 0 || status == 202):
		case code != 0 && msg != "" && (status == 200 || status == 400):
		default:
			t.Fatalf("checkMCPMessage(%q) = %d, %d, %q", body, status, code, msg)
		}
	})
}
