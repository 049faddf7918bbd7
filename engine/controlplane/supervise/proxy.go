package supervise

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Proxy serves every deployment's custom_url, <base>/deployments/<id>/<path>: it forwards
// <path> to the deployment's active revision, streaming responses (SSE) as they are written.
// The control plane's credentials (X-Api-Key, X-Tenant-Id), which the caller checked, are not
// passed on: the revision runs the user's code.
func (s *Supervisor) Proxy() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, PathPrefix)
		if !ok {
			writeDetail(w, http.StatusNotFound, "not a deployment's URL")
			return
		}
		id, path, _ := strings.Cut(rest, "/")
		d := s.lookup(id)
		if d == nil {
			writeDetail(w, http.StatusNotFound, fmt.Sprintf("deployment %s runs no revision", id))
			return
		}
		// A revision replaced between the lookup and the count is asked again: the switch
		// happens before the old one drains, so the second look finds the new one.
		var p *proc
		for range 3 {
			if p = d.current(); p == nil || p.enter() {
				break
			}
			p = nil
		}
		if p == nil {
			writeDetail(w, http.StatusServiceUnavailable, fmt.Sprintf("deployment %s has no running revision", id))
			return
		}
		defer p.leave()
		out := r.Clone(r.Context())
		out.URL.Path, out.URL.RawPath = "/"+path, ""
		out.Header.Del("X-Api-Key")
		out.Header.Del("X-Tenant-Id")
		p.proxy.ServeHTTP(w, out)
	})
}

// writeDetail answers the proxy's own errors in the runtime's error shape.
func writeDetail(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"detail": detail})
}
