package scenarios

import (
	"strings"
	"testing"
)

// TestStoreSemanticSearchSDK drives the store's semantic search (the default local embedding)
// with the official LangGraph JS SDK against the built binary: ranking by similarity with
// scores, per-item index fields, index false, filter and pagination.
func TestStoreSemanticSearchSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	ensureNodeModules(t)
	srv := startServerArgs(t, t.TempDir())
	out := runNode(t, srv, "store_search.mjs")
	if !strings.Contains(out, "store search scenario passed") {
		t.Fatalf("scenario output: %s", out)
	}
}
