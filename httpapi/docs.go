package httpapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
)

// openapiJSON is the OpenAPI 3.1 description of every route. docs_test.go fails when a registered
// route is missing from it, or when it documents a route that is not registered.
//
//go:embed openapi.json
var openapiJSON []byte

// OpenAPI returns the OpenAPI document of every route, the one /openapi.json serves: the contract
// tests of handler packages check their exchanges against it (see httpapitest).
func OpenAPI() []byte { return slices.Clone(openapiJSON) }

func (s *Server) docsRoutes() {
	s.echo.GET("/openapi.json", s.openapi)
	s.echo.GET("/docs", s.docs)
}

// openapi answers the OpenAPI document.
func (s *Server) openapi(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openapiJSON)
}

// docs answers a readable HTML page of the API to browsers, and the OpenAPI document itself to
// every other client (or with ?format=json). The page has no external assets: it works offline.
func (s *Server) docs(c echo.Context) error {
	if c.QueryParam("format") == "json" || !acceptsHTML(c.Request().Header.Get(echo.HeaderAccept)) {
		return s.openapi(c)
	}
	page, err := docsPage()
	if err != nil {
		return err
	}
	return c.HTMLBlob(http.StatusOK, page)
}

// acceptsHTML reports whether an Accept header asks for text/html.
func acceptsHTML(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(mt), "text/html") {
			continue
		}
		// text/html;q=0 means "not HTML".
		for _, p := range strings.Split(params, ";") {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.TrimSpace(k) == "q" {
				if q, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && q == 0 {
					return false
				}
			}
		}
		return true
	}
	return false
}

// docsPage renders the HTML page once from the embedded document.
var docsPage = sync.OnceValues(func() ([]byte, error) {
	var doc apiDoc
	if err := json.Unmarshal(openapiJSON, &doc); err != nil {
		return nil, fmt.Errorf("docs: parse openapi.json: %w", err)
	}
	var buf bytes.Buffer
	if err := docsTemplate.Execute(&buf, doc.view()); err != nil {
		return nil, fmt.Errorf("docs: render: %w", err)
	}
	return buf.Bytes(), nil
})

// apiDoc is the part of an OpenAPI document the HTML page shows.
type apiDoc struct {
	OpenAPI string `json:"openapi"`
	Info    struct {
		Title       string `json:"title"`
		Version     string `json:"version"`
		Description string `json:"description"`
	} `json:"info"`
	Tags []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"tags"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas   map[string]json.RawMessage `json:"schemas"`
		Responses map[string]apiResponse     `json:"responses"`
	} `json:"components"`
}

type apiParameter struct {
	Ref         string          `json:"$ref"`
	Name        string          `json:"name"`
	In          string          `json:"in"`
	Required    bool            `json:"required"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
}

type apiContent map[string]struct {
	Schema json.RawMessage `json:"schema"`
}

type apiResponse struct {
	Ref         string     `json:"$ref"`
	Description string     `json:"description"`
	Content     apiContent `json:"content"`
}

type apiOperation struct {
	OperationID string         `json:"operationId"`
	Summary     string         `json:"summary"`
	Description string         `json:"description"`
	Tags        []string       `json:"tags"`
	Parameters  []apiParameter `json:"parameters"`
	RequestBody *struct {
		Description string     `json:"description"`
		Content     apiContent `json:"content"`
	} `json:"requestBody"`
	Responses map[string]apiResponse `json:"responses"`
}

// The view the template renders.
type (
	docsView struct {
		Title, Version, OpenAPI string
		Description             string
		Tags                    []tagView
		Schemas                 []schemaView
	}
	tagView struct {
		Name, Description string
		Ops               []opView
	}
	opView struct {
		Method, Path, ID, Summary, Description string
		Params                                 []paramView
		BodyDescription                        string
		Body                                   []contentView
		Responses                              []responseView
	}
	paramView struct {
		Name, In, Description string
		Schema                schemaRef
		Required              bool
	}
	contentView struct {
		Type   string
		Schema schemaRef
	}
	responseView struct {
		Status, Description string
		Content             []contentView
	}
	schemaView struct {
		Name, JSON string
	}
	// schemaRef shows a schema: a link to a named schema (Array: a list of them), or its JSON.
	schemaRef struct {
		Ref   string
		Array bool
		JSON  string
	}
)

var methodOrder = []string{"get", "put", "post", "patch", "delete", "head", "options", "trace"}

func (d apiDoc) view() docsView {
	v := docsView{Title: d.Info.Title, Version: d.Info.Version, OpenAPI: d.OpenAPI, Description: d.Info.Description}
	byTag := map[string]*tagView{}
	var order []string
	tag := func(name string) *tagView {
		if t, ok := byTag[name]; ok {
			return t
		}
		byTag[name] = &tagView{Name: name}
		order = append(order, name)
		return byTag[name]
	}
	for _, t := range d.Tags {
		tag(t.Name).Description = t.Description
	}
	for _, p := range sortedKeys(d.Paths) {
		item := d.Paths[p]
		var shared []apiParameter
		if raw, ok := item["parameters"]; ok {
			_ = json.Unmarshal(raw, &shared)
		}
		for _, m := range methodOrder {
			raw, ok := item[m]
			if !ok {
				continue
			}
			var op apiOperation
			if json.Unmarshal(raw, &op) != nil {
				continue
			}
			ov := opView{Method: strings.ToUpper(m), Path: p, ID: op.OperationID, Summary: op.Summary, Description: op.Description}
			for _, pa := range append(slices.Clone(shared), op.Parameters...) {
				ov.Params = append(ov.Params, paramView{Name: pa.Name, In: pa.In, Description: pa.Description, Required: pa.Required, Schema: showSchema(pa.Schema)})
			}
			if op.RequestBody != nil {
				ov.BodyDescription = op.RequestBody.Description
				ov.Body = contents(op.RequestBody.Content)
			}
			for _, st := range sortedKeys(op.Responses) {
				r := op.Responses[st]
				if name, ok := strings.CutPrefix(r.Ref, "#/components/responses/"); ok {
					shared := d.Components.Responses[name]
					if r.Description == "" {
						r.Description = shared.Description
					}
					r.Content = shared.Content
				}
				ov.Responses = append(ov.Responses, responseView{Status: st, Description: r.Description, Content: contents(r.Content)})
			}
			name := "other"
			if len(op.Tags) > 0 {
				name = op.Tags[0]
			}
			t := tag(name)
			t.Ops = append(t.Ops, ov)
		}
	}
	for _, name := range order {
		if t := byTag[name]; len(t.Ops) > 0 {
			v.Tags = append(v.Tags, *t)
		}
	}
	for _, name := range sortedKeys(d.Components.Schemas) {
		v.Schemas = append(v.Schemas, schemaView{Name: name, JSON: indentJSON(d.Components.Schemas[name])})
	}
	return v
}

func contents(c apiContent) []contentView {
	var out []contentView
	for _, ct := range sortedKeys(c) {
		out = append(out, contentView{Type: ct, Schema: showSchema(c[ct].Schema)})
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// showSchema shows a reference to a named schema (or an array of them) as a link; any other
// schema as JSON, on one line when short.
func showSchema(raw json.RawMessage) schemaRef {
	if len(raw) == 0 {
		return schemaRef{}
	}
	var s struct {
		Ref   string `json:"$ref"`
		Type  any    `json:"type"`
		Items struct {
			Ref string `json:"$ref"`
		} `json:"items"`
	}
	if json.Unmarshal(raw, &s) == nil {
		if name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/"); ok {
			return schemaRef{Ref: name}
		}
		if name, ok := strings.CutPrefix(s.Items.Ref, "#/components/schemas/"); ok && s.Type == "array" {
			return schemaRef{Ref: name, Array: true}
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil && buf.Len() <= 100 {
		return schemaRef{JSON: buf.String()}
	}
	return schemaRef{JSON: indentJSON(raw)}
}

func indentJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		return string(raw)
	}
	return buf.String()
}

var docsTemplate = template.Must(template.New("docs").Parse(`{{define "schema"}}{{if .Ref}}{{if .Array}}array of {{end}}<a href="#schema-{{.Ref}}">{{.Ref}}</a>{{else if .JSON}}<pre>{{.JSON}}</pre>{{end}}{{end}}<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} API</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; color: #1d1d1f; }
h2 { border-bottom: 1px solid #ddd; padding-bottom: .2rem; margin-top: 2.5rem; }
h4 { margin: .8rem 0 .2rem; }
details { border: 1px solid #ddd; border-radius: 6px; margin: .4rem 0; padding: .3rem .7rem; }
summary { cursor: pointer; }
code, pre { font: 13px/1.4 ui-monospace, monospace; }
pre { background: #f6f6f8; padding: .4rem; margin: .2rem 0; overflow-x: auto; white-space: pre-wrap; }
.m { display: inline-block; min-width: 4.5rem; font-weight: 600; }
.GET { color: #0a7d2c; } .POST { color: #0b5cad; } .PUT { color: #8a5a00; } .PATCH { color: #6b3fa0; } .DELETE { color: #b3261e; }
table { border-collapse: collapse; margin: .3rem 0; width: 100%; } td, th { border: 1px solid #ddd; padding: .2rem .5rem; text-align: left; vertical-align: top; }
.muted { color: #666; }
</style>
</head>
<body>
<h1>{{.Title}} <small class="muted">{{.Version}}</small></h1>
<p>{{.Description}}</p>
<p class="muted">OpenAPI {{.OpenAPI}} document: <a href="/openapi.json">/openapi.json</a></p>
<nav><ul>{{range .Tags}}<li><a href="#tag-{{.Name}}">{{.Name}}</a></li>{{end}}<li><a href="#schemas">schemas</a></li></ul></nav>
{{range .Tags}}
<h2 id="tag-{{.Name}}">{{.Name}}</h2>
{{if .Description}}<p>{{.Description}}</p>{{end}}
{{range .Ops}}
<details id="{{.ID}}">
<summary><span class="m {{.Method}}">{{.Method}}</span> <code>{{.Path}}</code> {{.Summary}}</summary>
{{if .Description}}<p>{{.Description}}</p>{{end}}
<p class="muted">operationId: <code>{{.ID}}</code></p>
{{if .Params}}<h4>Parameters</h4>
<table><tr><th>name</th><th>in</th><th>schema</th><th>description</th></tr>
{{range .Params}}<tr><td><code>{{.Name}}</code>{{if .Required}} (required){{end}}</td><td>{{.In}}</td><td>{{template "schema" .Schema}}</td><td>{{.Description}}</td></tr>
{{end}}</table>{{end}}
{{if .Body}}<h4>Request body</h4>{{if .BodyDescription}}<p>{{.BodyDescription}}</p>{{end}}
{{range .Body}}<p><code>{{.Type}}</code>: {{template "schema" .Schema}}</p>{{end}}{{end}}
<h4>Responses</h4>
<table><tr><th>status</th><th>description</th><th>body</th></tr>
{{range .Responses}}<tr><td>{{.Status}}</td><td>{{.Description}}</td><td>{{range .Content}}<div><code>{{.Type}}</code>: {{template "schema" .Schema}}</div>{{end}}</td></tr>
{{end}}</table>
</details>
{{end}}
{{end}}
<h2 id="schemas">Schemas</h2>
{{range .Schemas}}
<details id="schema-{{.Name}}"><summary><code>{{.Name}}</code></summary><pre>{{.JSON}}</pre></details>
{{end}}
<script>
function openTarget() { const d = document.getElementById(decodeURIComponent(location.hash.slice(1))); if (d && d.tagName === "DETAILS") d.open = true; }
addEventListener("hashchange", openTarget); openTarget();
</script>
</body>
</html>
`))
