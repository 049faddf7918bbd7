package traces

import (
	"encoding/json"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/projections"
)

// FeedbackTokenCreated is the event of a presigned feedback token (trace.FeedbackToken), on the trace
// of its run: the token expires with the trace at the latest.
const FeedbackTokenCreated = "feedback_token_created"

// Tokens are kept by id (tTokens: token -> FeedbackToken JSON; ids are random, so one bucket
// serves every tenant) and by trace (tTokensByTrace: tenant,trace,token), for the trace's expiry.
var (
	tTokens        = []byte("trace_feedback_tokens")          // token -> FeedbackToken JSON
	tTokensByTrace = []byte("trace_feedback_tokens_by_trace") // tenant,trace,token -> nil
)

func applyFeedbackToken(tx *bbolt.Tx, tenant, traceID string, data []byte) error {
	var tok trace.FeedbackToken
	if err := json.Unmarshal(data, &tok); err != nil {
		return err
	}
	tok.Tenant = tenant
	if err := projections.PutJSON(tx.Bucket(tTokens), []byte(tok.ID), tok); err != nil {
		return err
	}
	return tx.Bucket(tTokensByTrace).Put(tkey(tenant, traceID, tok.ID), nil)
}

// dropTraceTokens deletes the tokens of a trace.
func dropTraceTokens(tx *bbolt.Tx, tenant, traceID string) error {
	prefix := tkey(tenant, traceID)
	var ids []string
	c := tx.Bucket(tTokensByTrace).Cursor()
	for k, _ := c.Seek(prefix); k != nil && hasPrefix(k, prefix); k, _ = c.Next() {
		ids = append(ids, string(k[len(prefix)+1:]))
	}
	for _, id := range ids {
		if err := tx.Bucket(tTokens).Delete([]byte(id)); err != nil {
			return err
		}
	}
	return deleteUnder(tx.Bucket(tTokensByTrace), prefix)
}

// FeedbackToken returns a presigned feedback token by id, whatever its tenant.
func (v *TraceView) FeedbackToken(id string) (trace.FeedbackToken, bool, error) {
	var tok trace.FeedbackToken
	ok, err := projections.GetJSON(v.tx.Bucket(tTokens), []byte(id), &tok)
	return tok, ok, err
}
