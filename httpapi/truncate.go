package httpapi

import (
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
)

// truncateFlags are the flags POST /internal/truncate takes. The checkpoints are named three ways:
// "checkpointer" by the reference dev server, "checkpoint" by the LangGraph test suites' helper,
// "checkpoints" by others.
var truncateFlags = []string{"runs", "threads", "assistants", "checkpointer", "checkpoint", "checkpoints", "store"}

// truncate empties what the body's flags name (served with jetgraph serve --dev only): see
// engine/truncate. Unknown keys are refused rather than ignored, so that a misspelt flag is not
// taken for a truncation that did nothing.
func (s *Server) truncate(c echo.Context) error {
	if s.deps.Auth != nil {
		// It empties every user's data: only an admin (the admin API key) may, whatever the
		// authorization rules say of threads.
		if u, _ := engine.UserFrom(c.Request().Context()); !slices.Contains(u.Permissions, engine.AdminPermission) {
			return engine.E(engine.Op("truncate"), engine.Forbidden, "Truncating the data needs the admin permission.")
		}
	}
	var errs engine.Violations
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	for k := range f.raw {
		if !slices.Contains(truncateFlags, k) {
			errs.Add("extra_forbidden", "Extra inputs are not permitted: the flags are "+quoteList(truncateFlags), "body", k)
		}
	}
	d := engine.TruncatedData{
		Runs: f.Bool("runs", false), Threads: f.Bool("threads", false), Assistants: f.Bool("assistants", false),
		Store: f.Bool("store", false),
	}
	for _, k := range []string{"checkpointer", "checkpoint", "checkpoints"} {
		d.Checkpoints = f.Bool(k, false) || d.Checkpoints
	}
	if err := errs.Err("truncate"); err != nil {
		return err
	}
	if err := s.deps.Truncate.Truncate(c.Request().Context(), d); err != nil {
		return err
	}
	return OK(c, map[string]bool{"ok": true})
}
