package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/projections"
)

// runThread finds the thread of a run that `replay run` was given without --thread: from the
// server holding --data (GET /runs/{run_id}), or from the data folder's runs projection, which
// indexes every run by id.
func runThread(ctx context.Context, o *options, run string) (string, error) {
	u, err := uuid.Parse(run)
	if err != nil {
		return "", fmt.Errorf("a run id is a UUID: %w", err)
	}
	run = u.String()
	if o.natsURL != "" {
		return "", fmt.Errorf("run %s: with --nats-url, name its thread with --thread", run)
	}
	data, err := existingData(o)
	if err != nil {
		return "", err
	}
	lock, err := lockData(data)
	var inUse errDataInUse
	if errors.As(err, &inUse) {
		return runThreadFromServer(ctx, data, run)
	}
	if err != nil {
		return "", err
	}
	defer lock.release()
	db, err := projections.OpenDB(platform.DBPath(data), o.logger)
	if err != nil {
		return "", err
	}
	defer db.Close()
	thread, ok, err := projections.NewRuns(db).ThreadOf(engine.DefaultTenant, run)
	if err != nil {
		return "", fmt.Errorf("run %s: %w", run, err)
	}
	if !ok {
		return "", fmt.Errorf("run %s: no such run in %s", run, data)
	}
	return thread, nil
}

// runThreadFromServer asks the server that holds the data folder for the run.
func runThreadFromServer(ctx context.Context, data, run string) (string, error) {
	info, err := runningServer(data)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/runs/%s", info.Addr, url.PathEscape(run)), nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("run %s: ask the server at %s: %w", run, info.Addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return "", fmt.Errorf("run %s: no such run", run)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("run %s: the server at %s answered %s", run, info.Addr, resp.Status)
	}
	var rec struct {
		ThreadID string `json:"thread_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&rec); err != nil || rec.ThreadID == "" {
		return "", fmt.Errorf("run %s: the server's answer names no thread (%v)", run, err)
	}
	return rec.ThreadID, nil
}
