package engine

import (
	"fmt"

	"github.com/google/uuid"
)

// AggregateID returns id in the form its aggregate of kind has in the log, or an error when id
// cannot be one: a thread, assistant or cron id is a UUID (canonical form), a store item's is the 32
// lower-case hex digits of its hash (store.ItemID). Nothing else reaches a subject, so an id
// from a request never stands for a pattern ("*", ">") or for several tokens.
func AggregateID(kind, id string) (string, error) {
	switch kind {
	case "thread", "assistant", "cron":
		u, err := uuid.Parse(id)
		if err != nil {
			return "", fmt.Errorf("a %s id is a UUID: %w", kind, err)
		}
		return u.String(), nil
	case "store":
		if len(id) != 32 {
			return "", fmt.Errorf("a store item id is 32 hex digits, not %d characters", len(id))
		}
		for i := 0; i < len(id); i++ {
			if c := id[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return "", fmt.Errorf("a store item id is 32 lower-case hex digits")
			}
		}
		return id, nil
	}
	return "", fmt.Errorf("no aggregate kind %q: thread, assistant, cron or store", kind)
}
