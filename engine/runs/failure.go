package runs

import (
	"context"
	"log/slog"
	"strings"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
)

// logFailure tells the operator why a run failed, which its client is told only in the few words
// of its error (graph.ClassOf): a WARN line with the run, its thread, assistant and graph, the
// node the error came from, the attempt, and the whole chain of every error (the run's timeout,
// the runner's, the graph's). The chain goes through the masking of answers: the secrets of the
// run's kwargs and metadata and of its assistant's config and context, and the credentials of
// URLs, never reach the log.
func (s *Service) logFailure(ctx context.Context, rec engine.RunRecord, a engine.Assistant, errs ...error) {
	var chain []string
	node := ""
	for _, err := range errs {
		if err == nil {
			continue
		}
		chain = append(chain, err.Error())
		if node == "" {
			node = graph.FailedNode(err)
		}
	}
	attrs := []slog.Attr{
		slog.String("run_id", rec.RunID), slog.String("thread_id", rec.ThreadID),
		slog.String("assistant_id", rec.AssistantID), slog.String("graph_id", a.GraphID),
		slog.String("node", node), slog.Int("attempt", rec.Attempt),
		slog.String("err", engine.MaskText(strings.Join(chain, "; "), rec.Kwargs, rec.Metadata, a.Config, a.Context)),
	}
	s.logger.LogAttrs(ctx, slog.LevelWarn, "runs: run failed", attrs...)
}
