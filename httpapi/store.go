package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/store"
)

func (s *Server) storeRoutes() {
	s.echo.PUT("/store/items", s.putItem)
	s.echo.GET("/store/items", s.getItem)
	s.echo.DELETE("/store/items", s.deleteItem)
	s.echo.POST("/store/items/search", s.searchItems)
	s.echo.POST("/store/namespaces", s.listNamespaces)
}

// labels reads a list of namespace labels; with nonEmpty, an empty list is a violation. The label
// rule itself (no empty label, no period) is the engine's, reported with the reference text.
func labels(f *Fields, name string, nonEmpty bool) []string {
	if !f.Present(name) {
		return nil
	}
	var ls []string
	if !f.decode(name, &ls) {
		f.Add("list_type", "Input should be a valid list of strings", name)
		return nil
	}
	if nonEmpty && len(ls) == 0 {
		f.Add("too_short", "List should have at least 1 item after validation, not 0", name)
	}
	return ls
}

// itemKey reads the required, non-empty key of an item.
func itemKey(f *Fields) string {
	if !f.Require("key") {
		return ""
	}
	key := f.String("key")
	if key == "" && f.decode("key", new(string)) {
		f.Add("string_too_short", "String should have at least 1 character", "key")
	}
	return key
}

func (s *Server) putItem(c echo.Context) error {
	var errs engine.Violations
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	req := store.Put{Key: itemKey(f)}
	if f.Require("namespace") {
		req.Namespace = labels(f, "namespace", true)
	}
	if f.Require("value") {
		req.Value = f.Object("value")
	}
	if f.Present("index") {
		var on bool
		var paths []string
		switch {
		case f.decode("index", &on) && !on:
			req.Index = false
		case f.decode("index", &paths):
			req.Index = paths
		default:
			f.Add("union_type", "Input should be false or a list of strings", "index")
		}
	}
	if ttl, given := f.Number("ttl"); given {
		ttlInRange(f.errs, ttl, "body", "ttl")
		req.TTL = &ttl
	}
	if err := errs.Err("store.put"); err != nil {
		return err
	}
	if err := s.deps.Store.Put(c.Request().Context(), req); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// queryNamespace reads the namespace of GET /store/items: dot-joined as the SDKs send it
// (namespace=a.b), one label per repeated parameter (namespace=a&namespace=b, or namespace[]=a),
// or a JSON list of strings (namespace=["a","b"]).
func queryNamespace(c echo.Context, errs *engine.Violations) []string {
	q := c.QueryParams()
	vs := q["namespace"]
	if len(vs) == 0 {
		vs = q["namespace[]"]
		if len(vs) > 0 {
			return vs
		}
		errs.Add("missing", "Field required", "query", "namespace")
		return nil
	}
	if len(vs) > 1 {
		return vs
	}
	var ls []string
	if strings.HasPrefix(vs[0], "[") && json.Unmarshal([]byte(vs[0]), &ls) == nil {
		return ls
	}
	return strings.Split(vs[0], ".")
}

func (s *Server) getItem(c echo.Context) error {
	var errs engine.Violations
	ns := queryNamespace(c, &errs)
	q := QueryFields(c, &errs)
	key := c.QueryParam("key")
	if key == "" {
		errs.Add("missing", "Field required", "query", "key")
	}
	refresh := q.Bool("refresh_ttl", true)
	if err := errs.Err("store.get"); err != nil {
		return err
	}
	item, found, err := s.deps.Store.Get(c.Request().Context(), ns, key, refresh)
	if err != nil {
		return err
	}
	if !found {
		// The reference servers answer a missing item with null, which the JS SDK turns into null.
		return OK(c, nil)
	}
	return OK(c, item)
}

func (s *Server) deleteItem(c echo.Context) error {
	var errs engine.Violations
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	key := itemKey(f)
	var ns []string
	if f.Require("namespace") {
		ns = labels(f, "namespace", true)
	}
	if err := errs.Err("store.delete"); err != nil {
		return err
	}
	if err := s.deps.Store.Delete(c.Request().Context(), ns, key); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) searchItems(c echo.Context) error {
	var errs engine.Violations
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	q := engine.StoreQuery{
		Prefix: labels(f, "namespace_prefix", false),
		Filter: f.Object("filter"),
		Query:  f.String("query"),
		// As on the reference server, a limit of 0 is the default.
		Limit:  f.Limit(10, 0),
		Offset: f.Int("offset", 0, 0),
	}
	if q.Limit == 0 {
		q.Limit = 10
	}
	engine.CheckFilter(q.Filter, &errs, "body", "filter")
	refresh := f.Bool("refresh_ttl", true)
	if err := errs.Err("store.search"); err != nil {
		return err
	}
	items, err := s.deps.Store.Search(c.Request().Context(), q, refresh)
	if err != nil {
		return err
	}
	if items == nil {
		items = []engine.Item{} // a list, never null, whatever the service returns for none
	}
	return OK(c, map[string]any{"items": items})
}

func (s *Server) listNamespaces(c echo.Context) error {
	var errs engine.Violations
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	q := engine.NamespaceQuery{
		Prefix: labels(f, "prefix", false),
		Suffix: labels(f, "suffix", false),
		Limit:  f.Limit(100, 1),
		Offset: f.Int("offset", 0, 0),
	}
	if f.Present("max_depth") {
		q.MaxDepth = f.Int("max_depth", 0, 1)
	}
	if err := errs.Err("store.namespaces"); err != nil {
		return err
	}
	ns, err := s.deps.Store.ListNamespaces(c.Request().Context(), q)
	if err != nil {
		return err
	}
	if ns == nil {
		ns = [][]string{}
	}
	return OK(c, map[string]any{"namespaces": ns})
}
