package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Thread statuses.
const (
	ThreadIdle        = "idle"
	ThreadBusy        = "busy"
	ThreadInterrupted = "interrupted"
	ThreadError       = "error"
)

// ThreadStatuses lists every thread status, for validation.
var ThreadStatuses = []string{ThreadIdle, ThreadBusy, ThreadInterrupted, ThreadError}

// Thread is a conversation: its metadata and config, and the values of its latest checkpoint.
// It marshals to the wire shape of the LangGraph API.
type Thread struct {
	ThreadID       string         `json:"thread_id"`
	CreatedAt      Time           `json:"created_at"`
	UpdatedAt      Time           `json:"updated_at"`
	StateUpdatedAt Time           `json:"state_updated_at"`
	Metadata       map[string]any `json:"metadata"`
	Status         string         `json:"status"`
	Config         map[string]any `json:"config"`
	Values         any            `json:"values"`
	Interrupts     map[string]any `json:"interrupts"`
	// TTL is shown only when a client asks for it (GET ?include=ttl).
	TTL *ThreadTTL `json:"ttl,omitempty"`
}

// ThreadTTL says when a thread is deleted by the sweeper.
type ThreadTTL struct {
	Strategy  string  `json:"strategy"`
	Minutes   float64 `json:"ttl"`
	ExpiresAt Time    `json:"expires_at"`
}

// Thread event types, stored on subject thread.<tenant>.<id>.<type>.
const (
	ThreadCreated = "created"
	ThreadPatched = "patched"
	ThreadDeleted = "deleted"
	// ThreadCheckpoint is a checkpoint of a graph run on the thread (CheckpointData).
	ThreadCheckpoint = "checkpoint"
	// ThreadWrites adds pending writes to a checkpoint of the thread (WritesData).
	ThreadWrites = "writes"
	// ThreadCheckpointPatched merges metadata into a checkpoint's (CheckpointPatchedData).
	ThreadCheckpointPatched = "checkpoint_patched"
	// ThreadCheckpointsPruned drops every checkpoint of the thread but the newest of each
	// namespace, with their pending writes and the values only they used (no payload): the
	// keep_latest strategy of POST /threads/prune.
	ThreadCheckpointsPruned = "checkpoints_pruned"
)

// Prune strategies of POST /threads/prune.
const (
	PruneDelete     = "delete"
	PruneKeepLatest = "keep_latest"
)

// CheckpointPatchedData is the payload of ThreadCheckpointPatched.
type CheckpointPatchedData struct {
	NS           string         `json:"ns"`
	CheckpointID string         `json:"checkpoint_id"`
	Metadata     map[string]any `json:"metadata"`
}

// ThreadCreatedData is the payload of ThreadCreated.
type ThreadCreatedData struct {
	Metadata map[string]any `json:"metadata"`
	Config   map[string]any `json:"config,omitempty"`
	TTL      *TTLSpec       `json:"ttl,omitempty"`
}

// ThreadPatchedData is the payload of ThreadPatched: metadata keys merged over the old ones, and
// optionally a new TTL counted from the patch.
type ThreadPatchedData struct {
	Metadata map[string]any `json:"metadata,omitempty"`
	TTL      *TTLSpec       `json:"ttl,omitempty"`
}

// ThreadDeletedData is the payload of ThreadDeleted. Reason is "ttl" when the sweeper deleted it.
type ThreadDeletedData struct {
	Reason string `json:"reason,omitempty"`
}

// TTLSpec is a time to live as clients send it.
type TTLSpec struct {
	Strategy string  `json:"strategy"`
	Minutes  float64 `json:"ttl"`
}

// CheckpointData is the payload of ThreadCheckpoint: one checkpoint of namespace NS ("" for the
// root graph). Blobs holds the values of the channels that changed relative to the parent
// checkpoint (version or value): a changed channel without Value or Ref has no value any more.
// When Full is set (a first checkpoint, or one whose parent the writer could not diff against)
// Blobs holds every channel that has a value, and nothing else is inherited from the parent.
type CheckpointData struct {
	NS         string              `json:"ns"`
	Checkpoint CheckpointHeader    `json:"checkpoint"`
	Metadata   json.RawMessage     `json:"metadata"`
	Parent     *CheckpointRef      `json:"parent"`
	Blobs      map[string]BlobData `json:"blobs"`
	Full       bool                `json:"full,omitempty"`
}

// CheckpointHeader is a checkpoint without its channel values.
type CheckpointHeader struct {
	V               int                         `json:"v"`
	ID              string                      `json:"id"`
	TS              time.Time                   `json:"ts"`
	ChannelVersions map[string]int64            `json:"channel_versions"`
	VersionsSeen    map[string]map[string]int64 `json:"versions_seen"`
}

// CheckpointRef names a checkpoint; it has the JSON shape of graph.Ref.
type CheckpointRef struct {
	ThreadID string `json:"thread_id"`
	NS       string `json:"checkpoint_ns"`
	ID       string `json:"checkpoint_id"`
}

// BlobData is a channel's value at a version: inline JSON, or Ref, the object-store name
// ("sha256:<hex>") of a value too large for an event. Neither: the channel has no value.
type BlobData struct {
	Version int64           `json:"version"`
	Value   json.RawMessage `json:"value,omitempty"`
	Ref     string          `json:"ref,omitempty"`
}

// WritesData is the payload of ThreadWrites: pending writes on checkpoint CheckpointID of NS.
type WritesData struct {
	NS           string             `json:"ns"`
	CheckpointID string             `json:"checkpoint_id"`
	Writes       []PendingWriteData `json:"writes"`
}

// PendingWriteData is a pending write as events carry it; a large Value is replaced by Ref as
// in BlobData.
type PendingWriteData struct {
	TaskID  string          `json:"task_id"`
	Channel string          `json:"channel"`
	Value   json.RawMessage `json:"value,omitempty"`
	Ref     string          `json:"ref,omitempty"`
}

// BlobDigest is the object-store name of a value too large for an event: "sha256:<hex>".
func BlobDigest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}
