package traces

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/jetgraph/jetgraph/engine/tracing/trace"
)

// TestDecodeRunDataAsEncodingJSON checks that run payloads decode to the values encoding/json
// gives, those the v2 engine refuses included, and that the text of object inputs and outputs
// is kept as sent.
func TestDecodeRunDataAsEncodingJSON(t *testing.T) {
	for name, c := range map[string]struct {
		data string
		text map[string]string
	}{
		"plain": {`{"run":{"id":"a","n":1.5e3,"inputs": {"b": [1, "x\u00e9"], "model": "m", "a": null} ,"outputs":{"z":{}},"extra":{"k":true}}}`,
			map[string]string{"inputs": `{"b": [1, "x\u00e9"], "model": "m", "a": null}`, "outputs": `{"z":{}}`}},
		"inputs last":                {`{"run":{"inputs":{"model_name":{"a":[]}}}}`, map[string]string{"inputs": `{"model_name":{"a":[]}}`}},
		"null and non-object fields": {`{"run":{"id":"a","inputs":null,"outputs":[1]}}`, nil},
		"blob":                       {`{"blob":{"name":"x","size":3}}`, nil},
		"blob and run":               {`{"run":{"id":"a"},"blob":{"name":"x","size":3}}`, nil},
		"names in another case":      {`{"Run":{"id":"a"}}`, nil},
		"duplicate names":            {`{"run":{"id":"a","inputs":{"k":1,"k":2},"id":"b"}}`, nil},
		"invalid utf-8":              {"{\"run\":{\"id\":\"a\",\"inputs\":{\"k\":\"\xff\"}}}", nil},
		"null run":                   {`{"run":null}`, nil},
		"escaped names and strings":  {`{"run":{"\u0069d":"a\"b\u00e9","na\u006de":"x","run_type":"\n"}}`, nil},
		"unknown and cased names":    {`{"run":{"ID":"a","id":"b","custom":"c","tags":["t"]}}`, nil},
		"invalid utf-8 string field": {"{\"run\":{\"id\":\"a\",\"name\":\"\xff\"}}", nil},
	} {
		raw, text, blob, err := decodeRunData([]byte(c.data))
		var want RunData
		wantErr := json.Unmarshal([]byte(c.data), &want)
		if in, ok := want.Run["inputs"].(map[string]any); ok && text["inputs"] != nil {
			// Inputs kept as text are decoded only for the keys DeriveStored reads.
			for k := range in {
				if !slices.Contains(trace.DerivedInputKeys, k) {
					delete(in, k)
				}
			}
		}
		if (err != nil) != (wantErr != nil) || !reflect.DeepEqual(raw, want.Run) || !reflect.DeepEqual(blob, want.Blob) {
			t.Errorf("%s: got %v %v %v, encoding/json %v %v %v", name, raw, blob, err, want.Run, want.Blob, wantErr)
		}
		got := map[string]string{}
		for k, v := range text {
			got[k] = string(v)
		}
		if c.text == nil {
			c.text = map[string]string{}
		}
		if !reflect.DeepEqual(got, c.text) {
			t.Errorf("%s: text %q, want %q", name, got, c.text)
		}
	}
	for _, bad := range []string{``, `[]`, `{"run":{"id":}}`, `{"run":{"id":"a"}`} {
		if _, _, _, err := decodeRunData([]byte(bad)); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}
