package httpapitest_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/httpapi/httpapitest"
)

// petDoc is a small OpenAPI 3.1 document with each shape the checks handle.
const petDoc = `{
  "openapi": "3.1.0",
  "info": {"title": "pets", "version": "1"},
  "paths": {
    "/pets": {
      "post": {
        "operationId": "createPet",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {
          "type": "object", "required": ["name"], "properties": {"name": {"type": "string", "minLength": 1}}}}}},
        "responses": {
          "200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}},
          "422": {"description": "bad", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
        }
      },
      "get": {
        "operationId": "listPets",
        "parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1}}],
        "responses": {"200": {"description": "ok", "content": {
          "application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}}},
          "application/x-ndjson": {"schema": {"$ref": "#/components/schemas/Pet"}}}}}
      }
    },
    "/pets/{id}": {
      "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
      "delete": {"operationId": "deletePet", "responses": {"204": {"description": "gone"}}},
      "get": {"operationId": "watchPet", "responses": {"200": {"description": "events",
        "content": {"text/event-stream": {"schema": {"type": "string"}}}}}}
    }
  },
  "components": {"schemas": {
    "Pet": {"type": "object", "required": ["id", "name", "tag"], "properties": {
      "id": {"type": "string", "format": "uuid"}, "name": {"type": "string"}, "tag": {}}},
    "Error": {"type": "object", "required": ["detail"], "properties": {"detail": {"type": "string"}}}
  }}
}`

const petID = "3f1c2a9e-4b7d-4c1e-9a55-0d6f3b2e8c41"

func TestCheck(t *testing.T) {
	c, err := httpapitest.Load([]byte(petDoc))
	if err != nil {
		t.Fatal(err)
	}
	pet := fmt.Sprintf(`{"id":%q,"name":"rex","tag":null}`, petID)
	jsonCT := http.Header{"Content-Type": {"application/json"}}
	for _, tc := range []struct {
		name                 string
		method, target, body string
		requestHeader        http.Header
		status               int
		header               http.Header
		response             string
		requestUnknown       bool   // Exchange.RequestBodyUnknown
		unchecked            bool   // Exchange.BodyUnchecked
		want                 string // a part of the one problem; "" for none
	}{
		{name: "conforms", method: "POST", target: "/pets", body: `{"name":"rex"}`, status: 200, header: jsonCT,
			response: `{"id":"` + petID + `","name":"rex","tag":"dog"}`},
		{name: "an empty schema admits null (JSON Schema 2020-12)", method: "POST", target: "/pets", body: `{"name":"rex"}`,
			status: 200, header: jsonCT, response: pet},
		{name: "a body without content type is read as JSON", method: "POST", target: "/pets", body: `{"name":"rex"}`,
			requestHeader: http.Header{}, status: 200, header: jsonCT, response: pet},
		{name: "an empty body is an empty object", method: "POST", target: "/pets", requestHeader: http.Header{},
			status: 200, header: jsonCT, response: pet, want: "request the document refuses"},
		{name: "an invalid request refused", method: "POST", target: "/pets", body: `{"name":""}`, status: 422,
			header: jsonCT, response: `{"detail":"name is empty"}`},
		{name: "an invalid request accepted", method: "POST", target: "/pets", body: `{"name":""}`, status: 200,
			header: jsonCT, response: pet, want: "answered 200 to a request the document refuses"},
		{name: "an invalid parameter accepted", method: "GET", target: "/pets?limit=0", status: 200, header: jsonCT,
			response: "[]", want: "request the document refuses"},
		{name: "a response missing a property", method: "POST", target: "/pets", body: `{"name":"rex"}`, status: 200,
			header: jsonCT, response: `{"id":"` + petID + `","name":"rex"}`, want: "missing property 'tag'"},
		{name: "a format the document asserts", method: "POST", target: "/pets", body: `{"name":"rex"}`, status: 200,
			header: jsonCT, response: `{"id":"nope","name":"rex","tag":1}`, want: "uuid"},
		{name: "an undocumented status", method: "POST", target: "/pets", body: `{"name":"rex"}`, status: 409,
			header: jsonCT, response: `{"detail":"exists"}`, want: "status is not supported"},
		{name: "an error body of the wrong shape", method: "POST", target: "/pets", body: `{}`, status: 422,
			header: jsonCT, response: `{"detail":[]}`, want: "want string"},
		{name: "an unlisted content type", method: "GET", target: "/pets", status: 200,
			header: http.Header{"Content-Type": {"text/plain"}}, response: "[]", want: `content type "text/plain" is not listed`},
		{name: "NDJSON lines", method: "GET", target: "/pets", status: 200,
			header: http.Header{"Content-Type": {"application/x-ndjson"}}, response: pet + "\n" + pet + "\n"},
		{name: "an NDJSON line of the wrong shape", method: "GET", target: "/pets", status: 200,
			header: http.Header{"Content-Type": {"application/x-ndjson"}}, response: pet + "\n{}\n", want: "line 2"},
		{name: "no body where the document has none", method: "DELETE", target: "/pets/" + petID, status: 204},
		{name: "a body where the document has none", method: "DELETE", target: "/pets/" + petID, status: 204,
			header: jsonCT, response: "{}", want: "has no body"},
		{name: "an event stream", method: "GET", target: "/pets/" + petID, status: 200,
			header: http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}},
		{name: "an event stream where JSON is documented", method: "GET", target: "/pets", status: 200,
			header: http.Header{"Content-Type": {"text/event-stream"}}, want: "is not listed"},
		{name: "a request body not to be checked", method: "POST", target: "/pets", body: `{"name":""}`,
			requestUnknown: true, status: 200, header: jsonCT, response: pet},
		{name: "a response body not kept", method: "POST", target: "/pets", body: `{"name":"rex"}`, status: 200,
			header: jsonCT, unchecked: true},
		{name: "a response body not kept, of an unlisted type", method: "POST", target: "/pets", body: `{"name":"rex"}`,
			status: 200, header: http.Header{"Content-Type": {"text/plain"}}, unchecked: true, want: "is not listed"},
		{name: "a response body not kept where the document has none", method: "DELETE", target: "/pets/" + petID,
			status: 204, unchecked: true, want: "has no body"},
		{name: "an undocumented route", method: "PUT", target: "/pets", status: 200, want: "no operation"},
		{name: "an unknown route answered 404", method: "GET", target: "/cats", status: 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.target, nil)
			if tc.requestHeader != nil {
				req.Header = tc.requestHeader
			} else if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if tc.header == nil {
				tc.header = http.Header{}
			}
			problems := c.Check(context.Background(), httpapitest.Exchange{Request: req, RequestBody: []byte(tc.body),
				RequestBodyUnknown: tc.requestUnknown, Status: tc.status, Header: tc.header, Body: []byte(tc.response),
				BodyUnchecked: tc.unchecked})
			switch {
			case tc.want == "" && len(problems) > 0:
				t.Errorf("problems %q, want none", problems)
			case tc.want != "" && (len(problems) != 1 || !strings.Contains(problems[0], tc.want)):
				t.Errorf("problems %q, want one with %q", problems, tc.want)
			}
		})
	}
}

// spy records what a test would report.
type spy struct {
	testing.TB
	errors []string
}

func (s *spy) Errorf(format string, args ...any) {
	s.errors = append(s.errors, fmt.Sprintf(format, args...))
}

// TestHandlerReportsAndStreams checks that a departing exchange fails the test with its method,
// path and status, and that an event stream reaches the client before the handler returns.
func TestHandlerReportsAndStreams(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /pets", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `[{"name":"no id"}]`)
	})
	mux.HandleFunc("GET /pets/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: first\n\n")
		http.NewResponseController(w).Flush()
		<-release
	})
	s := &spy{TB: t}
	ts := httptest.NewServer(httpapitest.Handler(s, []byte(petDoc), mux))
	defer ts.Close()

	resp, err := http.Get(ts.URL + "/pets/" + petID)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "event: first\n" {
		t.Fatalf("first stream line %q, %v: the stream did not reach the client", line, err)
	}
	close(release)
	resp.Body.Close()

	resp, err = http.Get(ts.URL + "/pets?limit=2")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	ts.Close() // waits for the handlers, and so for their checks

	if len(s.errors) != 1 || !strings.Contains(s.errors[0], "GET /pets?limit=2 -> 200") ||
		!strings.Contains(s.errors[0], "missing properties") {
		t.Errorf("reported %q, want one problem of GET /pets?limit=2 -> 200", s.errors)
	}
}

func TestLoadDocument(t *testing.T) {
	if _, err := httpapitest.Load(httpapi.OpenAPI()); err != nil {
		t.Fatal(err)
	}
	if _, err := httpapitest.Load([]byte(`{"openapi": "3.1.0", "paths": {"/x": {"get": {"responses": {"200": {"$ref": "#/nope"}}}}}}`)); err == nil {
		t.Error("a document with a dangling $ref loaded")
	}
}
