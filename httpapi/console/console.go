// Package console serves jetgraph's web console: a static page and its ES modules, embedded in
// the binary (web/dist is compiled from web/src by tsc and committed, so running jetgraph needs
// no Node). The assets carry no data: the console calls the same-origin API with the key the
// user enters, so the routes here are open. Every answer carries a strict Content-Security-Policy:
// scripts and styles only from this origin, no inline code, and Trusted Types enforced so that no
// markup sink (innerHTML) can be used by the console's own code either.
package console

import (
	"bytes"
	"embed"
	"html"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// Prefix is where the console is served.
const Prefix = "/console/"

// CSP is the Content-Security-Policy of every console answer.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src 'self' data:; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; " +
	"require-trusted-types-for 'script'; trusted-types 'none'"

//go:embed web/index.html web/style.css web/dist
var files embed.FS

// assetTypes are the content types of the assets by extension, fixed here rather than read from
// the system's MIME database, which differs between machines.
var assetTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
}

// prefixMeta is the page's tag that tells the console where the runtime API is.
var prefixMeta = []byte(`<meta name="jetgraph-runtime-prefix" content="">`)

// Handler serves the console's files by their path under Prefix ("", "index.html",
// "dist/main.js", "style.css"); mount it with the prefix stripped.
func Handler() http.Handler { return HandlerFor("") }

// HandlerFor is Handler for a runtime API served under runtimePrefix (langgraph.json's
// http.mount_prefix): the page tells the console, which calls the runtime's routes there and
// jetgraph's own (/tracing, /v2, /v1) at the root, where they stay.
func HandlerFor(runtimePrefix string) http.Handler {
	web, err := fs.Sub(files, "web")
	if err != nil {
		panic(err) // the embedded tree always has web/
	}
	meta := []byte(`<meta name="jetgraph-runtime-prefix" content="` + html.EscapeString(runtimePrefix) + `">`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setHeaders(w.Header())
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		if name == "" {
			name = "index.html"
		}
		ct, ok := assetTypes[path.Ext(name)]
		if !ok || (name != "index.html" && name != "style.css" && !strings.HasPrefix(name, "dist/")) {
			http.NotFound(w, r)
			return
		}
		b, err := fs.ReadFile(web, name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if name == "index.html" {
			b = bytes.Replace(b, prefixMeta, meta, 1)
		}
		w.Header().Set("Content-Type", ct)
		// The assets have no version in their names: the browser revalidates them, so a new
		// binary's console is loaded at once.
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			w.Write(b)
		}
	})
}

// setHeaders puts the console's security headers on an answer.
func setHeaders(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}
