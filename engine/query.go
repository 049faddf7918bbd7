package engine

// The queries of the read side. The HTTP API builds them from a request, the services pass them
// on, and the projections answer them: they belong to none of those layers, so they live here.

// ThreadQuery filters and orders a thread search.
type ThreadQuery struct {
	IDs       []string
	Metadata  map[string]any
	Values    map[string]any
	Status    string
	SortBy    string // one of ThreadSortFields
	SortOrder string // asc or desc
	Limit     int
	Offset    int
	// Auth is the user's rules' filter on the threads' metadata: a thread it does not match is
	// neither returned nor counted.
	Auth Filter
}

// ThreadSortFields lists the fields a thread search may sort by.
var ThreadSortFields = []string{"thread_id", "status", "created_at", "updated_at", "state_updated_at"}

// AssistantQuery filters and orders an assistant search.
type AssistantQuery struct {
	Metadata  map[string]any
	GraphID   string
	Name      string // case-insensitive substring of the name
	SortBy    string // one of AssistantSortFields; created_at when empty
	SortOrder string // asc or desc (the default)
	Limit     int    // <= 0: no limit
	Offset    int
	// Auth is the user's rules' filter on metadata; system assistants pass it whatever it is
	// (IsSystemAssistant), as every authenticated user may read them.
	Auth Filter
}

// AssistantSortFields lists the fields an assistant search may sort by.
var AssistantSortFields = []string{"assistant_id", "graph_id", "name", "created_at", "updated_at"}

// StoreQuery selects items of a store search.
type StoreQuery struct {
	Prefix []string       // namespace prefix; empty: every namespace
	Filter map[string]any // checked with CheckFilter
	// Query, when not empty and without Vector, keeps only the items whose indexed text
	// contains it (case insensitive) and ranks them by the number of occurrences: the lexical
	// search of a store without a semantic index.
	Query string
	// Vector, set by the store service when it has a semantic index, is Query's embedding
	// (named Embedding): the items embedded alike rank by cosine similarity, best first, and
	// the others follow, without a score.
	Vector    []float32
	Embedding string
	// Auth is the user's rules' filter, on the items' values and ANDed with Filter, as the
	// reference servers apply a store rule's filter.
	Auth   Filter
	Limit  int
	Offset int
}

// NamespaceQuery selects the namespaces a store lists. A "*" label in Prefix or Suffix matches
// any label.
type NamespaceQuery struct {
	Prefix   []string
	Suffix   []string
	MaxDepth int // > 0: namespaces are cut to their first MaxDepth labels
	Limit    int
	Offset   int
}
