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

// TestUnescReversesEsc: keys are taken apart again (a run's id from its key) exactly.
func TestUnescReversesEsc(t *testing.T) {
	for _, s := range []string{"", "0190a000-0000-7000-8000-000000000001", "a\x00b\x01c\x02d", "\x02\x02", "ü"} {
		got, err := unesc(esc(nil, s))
		if err != nil || got != s {
			t.Errorf("unesc(esc(%q)) = %q, %v", s, got, err)
		}
	}
	for _, bad := range []string{"\x02", "a\x02\x13"} {
		if _, err := unesc([]byte(bad)); err == nil {
			t.Errorf("unesc(%q) took a bad escape", bad)
		}
	}
}
