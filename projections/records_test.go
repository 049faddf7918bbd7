package projections

import (
	"encoding/json"
	"testing"
)

// TestDecodeJSONReadsWhatEncodingJSONReads: folds read with the v2 engine what encoding/json
// wrote or passed through, including a client's raw JSON with invalid UTF-8 or a repeated name.
func TestDecodeJSONReadsWhatEncodingJSONReads(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
	}{
		{"plain", `{"a":1,"b":"x","c":[1,2],"d":{"e":null}}`},
		{"invalid UTF-8", "{\"a\":\"\xff\xfe\"}"},
		{"a name twice", `{"a":1,"a":2}`},
		{"raw value passed through", `{"v":{"k":[true,false,null]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want, got map[string]any
			if err := json.Unmarshal([]byte(tc.data), &want); err != nil {
				t.Fatalf("encoding/json: %v", err)
			}
			if err := decodeJSON([]byte(tc.data), &got); err != nil {
				t.Fatalf("decodeJSON: %v", err)
			}
			w, _ := json.Marshal(want)
			g, _ := json.Marshal(got)
			if string(w) != string(g) {
				t.Fatalf("decodeJSON read %s, encoding/json %s", g, w)
			}
		})
	}
}
