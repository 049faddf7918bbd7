// Package controlapi serves the deployment control plane over HTTP: /v2/deployments (and
// their revisions), /v2/listeners, /v1/integrations/git_host/install, every call authenticated
// by X-Api-Key; and the deployments' custom_url, authenticated with a key of the deployment's
// tenant before the request reaches its runtime. Handlers parse and answer; the rules are
// engine/controlplane's, and the server's one error mapping answers their errors.
package controlapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	cp "github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/httpapi"
)

// Service is the control plane's command and query side (controlplane.Service).
type Service interface {
	CreateDeployment(ctx context.Context, body map[string]any) (cp.Deployment, error)
	GetDeployment(ctx context.Context, id string) (cp.Deployment, error)
	ListDeployments(ctx context.Context, f cp.DeploymentFilter, offset, limit int) ([]cp.Deployment, int, error)
	UpdateDeployment(ctx context.Context, id string, body map[string]any) (cp.Deployment, error)
	DeleteDeployment(ctx context.Context, id string) error
	ListRevisions(ctx context.Context, id string, statuses []cp.RevisionStatus, offset, limit int) ([]cp.Revision, int, error)
	GetRevision(ctx context.Context, id, revisionID string) (cp.Revision, error)
	RevisionLog(ctx context.Context, id, revisionID string) (string, error)
	Redeploy(ctx context.Context, id, revisionID string) (cp.Deployment, error)
	GetListener(ctx context.Context, id string) (cp.Listener, error)
	ListListeners(ctx context.Context, offset, limit int) ([]cp.Listener, int, error)
	CreateListener(ctx context.Context, body map[string]any) (cp.Listener, error)
	UpdateListener(ctx context.Context, id string, body map[string]any) (cp.Listener, error)
	DeleteListener(ctx context.Context, id string) error
}

// Authenticator maps a request's X-Api-Key (and X-Tenant-Id) to the tenant it acts for
// (keys.Service).
type Authenticator interface {
	Authenticate(ctx context.Context, key, tenantHeader string) (string, error)
}

// EventTailer reads a deployment's events (eventlog.Log).
type EventTailer interface {
	Tail(ctx context.Context, agg eventlog.Aggregate, follow bool, emit func(eventlog.Event) error) error
}

// ProxyPrefix is the path under which the deployments' runtimes are served: a deployment's
// custom_url is <server>/deployments/<deployment_id>, and Proxy is handed the request whole.
const ProxyPrefix = "/deployments/"

// Handlers are the control plane's routes.
type Handlers struct {
	svc    Service
	auth   Authenticator
	events EventTailer
	proxy  http.Handler
}

// New builds the handlers; proxy (Deployer.Proxy) may be nil: custom_url is then not served.
func New(svc Service, auth Authenticator, events EventTailer, proxy http.Handler) *Handlers {
	return &Handlers{svc: svc, auth: auth, events: events, proxy: proxy}
}

// Mount registers the routes.
func (h *Handlers) Mount(e *echo.Echo) {
	v2 := e.Group("/v2", h.authenticate)
	v2.POST("/deployments", h.createDeployment)
	v2.GET("/deployments", h.listDeployments)
	v2.GET("/deployments/:deployment_id", h.getDeployment)
	v2.PATCH("/deployments/:deployment_id", h.updateDeployment)
	v2.DELETE("/deployments/:deployment_id", h.deleteDeployment)
	v2.GET("/deployments/:deployment_id/events", h.deploymentEvents)
	v2.GET("/deployments/:deployment_id/revisions", h.listRevisions)
	v2.GET("/deployments/:deployment_id/revisions/:revision_id", h.getRevision)
	v2.GET("/deployments/:deployment_id/revisions/:revision_id/logs", h.revisionLogs)
	v2.POST("/deployments/:deployment_id/revisions/:revision_id/redeploy", h.redeploy)
	v2.GET("/listeners", h.listListeners)
	v2.POST("/listeners", h.createListener)
	v2.GET("/listeners/:listener_id", h.getListener)
	v2.PATCH("/listeners/:listener_id", h.updateListener)
	v2.DELETE("/listeners/:listener_id", h.deleteListener)
	e.GET("/v1/integrations/git_host/install", h.integrations, h.authenticate)
	if h.proxy != nil {
		e.Any(ProxyPrefix+":deployment_id", h.serveDeployment, h.authenticate)
		e.Any(ProxyPrefix+":deployment_id/*", h.serveDeployment, h.authenticate)
	}
}

// authenticate puts the tenant of the request's key in its context; no key or an unknown one
// is 401, a key naming a tenant it may not act for 403.
func (h *Handlers) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		key, bearer := credential(req.Header)
		tenant, err := h.auth.Authenticate(req.Context(), key, req.Header.Get("X-Tenant-Id"))
		if err != nil {
			return err
		}
		if bearer {
			// The bearer token was the control plane's key: a deployment's runtime, behind
			// custom_url, runs the user's code and must not see it (the proxy drops X-Api-Key).
			req.Header.Del("Authorization")
		}
		c.SetRequest(req.WithContext(engine.WithTenant(req.Context(), tenant)))
		return next(c)
	}
}

// credential is the request's API key: X-Api-Key, or without it the token of an
// "Authorization: Bearer <key>" header (the spec's Bearer Auth scheme; the scheme's name is
// case-insensitive), bearer telling which. With X-Api-Key present, Authorization is not the
// control plane's: it goes on to a deployment's runtime, whose own auth may read it.
func credential(h http.Header) (key string, bearer bool) {
	if k := h.Get("X-Api-Key"); k != "" {
		return k, false
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(h.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// serveDeployment hands a request for a deployment's custom_url to its runtime, once its key
// is known to be its tenant's (another tenant's deployment is not found).
func (h *Handlers) serveDeployment(c echo.Context) error {
	var errs engine.Violations
	id := httpapi.PathUUID(c, "deployment_id", &errs)
	if err := errs.Err("controlapi.proxy"); err != nil {
		return err
	}
	if _, err := h.svc.GetDeployment(c.Request().Context(), id); err != nil {
		return err
	}
	h.proxy.ServeHTTP(c.Response(), c.Request())
	return nil
}

// body reads the request's JSON object.
func body(c echo.Context, errs *engine.Violations) (map[string]any, error) {
	raw, err := httpapi.ReadJSON(c, errs)
	if err != nil || len(raw) == 0 {
		return map[string]any{}, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		errs.Add("model_attributes_type", "Input should be a valid dictionary or object to extract fields from", "body")
	}
	return m, nil
}

// page reads limit (1..100, default 20) and offset (>= 0).
func page(c echo.Context, errs *engine.Violations) (offset, limit int) {
	limit = 20
	if s := c.QueryParam("limit"); s != "" {
		n, err := strconv.Atoi(s)
		switch {
		case err != nil:
			errs.Add("int_parsing", "Input should be a valid integer", "query", "limit")
		case n < 1:
			errs.Add("greater_than_equal", "Input should be greater than or equal to 1", "query", "limit")
		case n > 100:
			errs.Add("less_than_equal", "Input should be less than or equal to 100", "query", "limit")
		default:
			limit = n
		}
	}
	if s := c.QueryParam("offset"); s != "" {
		n, err := strconv.Atoi(s)
		switch {
		case err != nil:
			errs.Add("int_parsing", "Input should be a valid integer", "query", "offset")
		case n < 0:
			errs.Add("greater_than_equal", "Input should be greater than or equal to 0", "query", "offset")
		default:
			offset = n
		}
	}
	return offset, limit
}

// listAnswer is a list's answer: a page and the offset of the next.
type listAnswer[T any] struct {
	Resources []T `json:"resources"`
	Offset    int `json:"offset"`
}

func masked(ds []cp.Deployment) []cp.Deployment {
	out := make([]cp.Deployment, len(ds))
	for i, d := range ds {
		out[i] = d.Masked()
	}
	return out
}

func (h *Handlers) createDeployment(c echo.Context) error {
	var errs engine.Violations
	b, err := body(c, &errs)
	if err != nil {
		return err
	}
	if err := errs.Err("controlapi.create_deployment"); err != nil {
		return err
	}
	d, err := h.svc.CreateDeployment(c.Request().Context(), b)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, d.Masked())
}

// deploymentStatuses are the values of the list's status filter.
var deploymentStatuses = []cp.DeploymentStatus{cp.DeploymentAwaitingDatabase, cp.DeploymentReady,
	cp.DeploymentUnused, cp.DeploymentAwaitingDelete, cp.DeploymentUnknown}

func (h *Handlers) listDeployments(c echo.Context) error {
	var errs engine.Violations
	offset, limit := page(c, &errs)
	f := cp.DeploymentFilter{NameContains: c.QueryParam("name_contains"), DeploymentType: c.QueryParam("deployment_type"),
		ImageVersion: c.QueryParam("image_version")}
	for _, s := range httpapi.SplitComma(c.QueryParam("status")) {
		st := cp.DeploymentStatus(s)
		if !contains(deploymentStatuses, st) {
			errs.Add("enum", "Input should be 'AWAITING_DATABASE', 'READY', 'UNUSED', 'AWAITING_DELETE' or 'UNKNOWN'", "query", "status")
		}
		f.Statuses = append(f.Statuses, st)
	}
	if t := f.DeploymentType; t != "" && t != "dev_free" && t != "dev" && t != "prod" {
		errs.Add("enum", "Input should be 'dev_free', 'dev' or 'prod'", "query", "deployment_type")
	}
	for _, id := range httpapi.SplitComma(strings.Join(c.QueryParams()["deployment_ids"], ",")) {
		u, err := httpapi.ParseUUID(id)
		if err != nil {
			errs.Add("uuid_parsing", "Input should be a valid UUID", "query", "deployment_ids")
			continue
		}
		f.IDs = append(f.IDs, u)
	}
	if err := errs.Err("controlapi.list_deployments"); err != nil {
		return err
	}
	ds, next, err := h.svc.ListDeployments(c.Request().Context(), f, offset, limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, listAnswer[cp.Deployment]{Resources: masked(ds), Offset: next})
}

func contains[T comparable](xs []T, x T) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// deploymentID reads the path's deployment id (422 when it is no UUID).
func deploymentID(c echo.Context, errs *engine.Violations) string {
	return httpapi.PathUUID(c, "deployment_id", errs)
}

func (h *Handlers) getDeployment(c echo.Context) error {
	var errs engine.Violations
	id := deploymentID(c, &errs)
	if err := errs.Err("controlapi.get_deployment"); err != nil {
		return err
	}
	d, err := h.svc.GetDeployment(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d.Masked())
}

func (h *Handlers) updateDeployment(c echo.Context) error {
	var errs engine.Violations
	id := deploymentID(c, &errs)
	b, err := body(c, &errs)
	if err != nil {
		return err
	}
	if err := errs.Err("controlapi.update_deployment"); err != nil {
		return err
	}
	d, err := h.svc.UpdateDeployment(c.Request().Context(), id, b)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d.Masked())
}

func (h *Handlers) deleteDeployment(c echo.Context) error {
	var errs engine.Violations
	id := deploymentID(c, &errs)
	if err := errs.Err("controlapi.delete_deployment"); err != nil {
		return err
	}
	if err := h.svc.DeleteDeployment(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// deploymentEvents streams a deployment's events as JSON lines, secrets masked (what
// `jetgraph events deployment <id>` prints when a server holds the data folder).
func (h *Handlers) deploymentEvents(c echo.Context) error {
	var errs engine.Violations
	id := deploymentID(c, &errs)
	if err := errs.Err("controlapi.deployment_events"); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := h.svc.GetDeployment(ctx, id); err != nil {
		return err
	}
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	return h.events.Tail(ctx, cp.DeploymentAggregate(id), false, func(e eventlog.Event) error {
		line, err := json.Marshal(cp.MaskEvent(e))
		if err != nil {
			return err
		}
		_, err = w.Write(append(line, '\n'))
		return err
	})
}

// revisionIDs reads the path's deployment and revision ids.
func revisionIDs(c echo.Context, errs *engine.Violations) (string, string) {
	return deploymentID(c, errs), httpapi.PathUUID(c, "revision_id", errs)
}

func (h *Handlers) listRevisions(c echo.Context) error {
	var errs engine.Violations
	id := deploymentID(c, &errs)
	offset, limit := page(c, &errs)
	var statuses []cp.RevisionStatus
	for _, s := range httpapi.SplitComma(c.QueryParam("status")) {
		st := cp.RevisionStatus(s)
		if !contains(cp.RevisionStatuses, st) {
			errs.Add("enum", "Input should be a revision status (CREATING, QUEUED, ..., DEPLOYED)", "query", "status")
		}
		statuses = append(statuses, st)
	}
	if err := errs.Err("controlapi.list_revisions"); err != nil {
		return err
	}
	rs, next, err := h.svc.ListRevisions(c.Request().Context(), id, statuses, offset, limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, listAnswer[cp.Revision]{Resources: rs, Offset: next})
}

func (h *Handlers) getRevision(c echo.Context) error {
	var errs engine.Violations
	id, rid := revisionIDs(c, &errs)
	if err := errs.Err("controlapi.get_revision"); err != nil {
		return err
	}
	r, err := h.svc.GetRevision(c.Request().Context(), id, rid)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}

func (h *Handlers) revisionLogs(c echo.Context) error {
	var errs engine.Violations
	id, rid := revisionIDs(c, &errs)
	if err := errs.Err("controlapi.revision_logs"); err != nil {
		return err
	}
	text, err := h.svc.RevisionLog(c.Request().Context(), id, rid)
	if err != nil {
		return err
	}
	return c.String(http.StatusOK, text)
}

func (h *Handlers) redeploy(c echo.Context) error {
	var errs engine.Violations
	id, rid := revisionIDs(c, &errs)
	if err := errs.Err("controlapi.redeploy"); err != nil {
		return err
	}
	d, err := h.svc.Redeploy(c.Request().Context(), id, rid)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, d.Masked())
}

func (h *Handlers) listListeners(c echo.Context) error {
	var errs engine.Violations
	offset, limit := page(c, &errs)
	if err := errs.Err("controlapi.list_listeners"); err != nil {
		return err
	}
	ls, next, err := h.svc.ListListeners(c.Request().Context(), offset, limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, listAnswer[cp.Listener]{Resources: ls, Offset: next})
}

func (h *Handlers) createListener(c echo.Context) error {
	var errs engine.Violations
	b, err := body(c, &errs)
	if err != nil {
		return err
	}
	if err := errs.Err("controlapi.create_listener"); err != nil {
		return err
	}
	l, err := h.svc.CreateListener(c.Request().Context(), b)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, l)
}

func (h *Handlers) getListener(c echo.Context) error {
	var errs engine.Violations
	id := httpapi.PathUUID(c, "listener_id", &errs)
	if err := errs.Err("controlapi.get_listener"); err != nil {
		return err
	}
	l, err := h.svc.GetListener(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, l)
}

func (h *Handlers) updateListener(c echo.Context) error {
	var errs engine.Violations
	id := httpapi.PathUUID(c, "listener_id", &errs)
	b, err := body(c, &errs)
	if err != nil {
		return err
	}
	if err := errs.Err("controlapi.update_listener"); err != nil {
		return err
	}
	l, err := h.svc.UpdateListener(c.Request().Context(), id, b)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, l)
}

func (h *Handlers) deleteListener(c echo.Context) error {
	var errs engine.Violations
	id := httpapi.PathUUID(c, "listener_id", &errs)
	if err := errs.Err("controlapi.delete_listener"); err != nil {
		return err
	}
	if err := h.svc.DeleteListener(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// integrations lists jetgraph's git integrations: its one built-in, for any git URL or path.
func (h *Handlers) integrations(c echo.Context) error {
	return c.JSON(http.StatusOK, []cp.Integration{cp.GitIntegration})
}
