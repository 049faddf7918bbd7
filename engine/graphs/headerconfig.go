package graphs

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jetgraph/jetgraph/engine"
)

// headerPatterns reads a {"includes": [...], "excludes": [...]} of header patterns (the
// reference also reads include and exclude).
func (c *configParser) headerPatterns(key string, raw json.RawMessage) (*engine.HeaderPatterns, error) {
	kvs, err := c.object(key, raw)
	if err != nil {
		return nil, err
	}
	p := &engine.HeaderPatterns{}
	for _, kv := range kvs {
		k := key + "." + kv.key
		var list *[]string
		switch kv.key {
		case "includes", "include":
			list = &p.Include
		case "excludes", "exclude":
			list = &p.Exclude
		default:
			c.warn(k + ": unknown setting, ignored (known: includes, excludes)")
			continue
		}
		var names []string
		if string(kv.value) != "null" {
			if err := json.Unmarshal(kv.value, &names); err != nil {
				return nil, c.fail(k, "must be a list of header names, * matching any characters")
			}
		}
		for i, n := range names {
			if strings.TrimSpace(n) == "" {
				return nil, c.fail(fmt.Sprintf("%s[%d]", k, i), "must be a header name, not empty")
			}
		}
		*list = append(*list, names...)
	}
	return p, nil
}
