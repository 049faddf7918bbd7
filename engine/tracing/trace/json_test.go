package trace

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestJSONAsEncodingJSON checks that the v2-engine helpers give encoding/json's results, on the
// texts the v2 engine's strict defaults refuse too.
func TestJSONAsEncodingJSON(t *testing.T) {
	texts := []string{
		`{"a":1,"b":[true,null,"x\u00e9<>&"],"c":{"d":1.5e300,"e":-0}}`,
		`null`, ` {"a": {}} `, `{"a":1,"a":2}`, "{\"a\":\"\xff\"}", `[1,2]`, `"s"`, `12`,
		`{"a":}`, `{"a":1} x`, ``, `{"a":1e400}`,
	}
	for _, text := range texts {
		var got, want map[string]any
		err, wantErr := DecodeObject([]byte(text), &got), json.Unmarshal([]byte(text), &want)
		if (err != nil) != (wantErr != nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("DecodeObject(%q) = %v, %v; encoding/json %v, %v", text, got, err, want, wantErr)
		}
		var gotV, wantV any
		err, wantErr = DecodeValue([]byte(text), &gotV), json.Unmarshal([]byte(text), &wantV)
		if (err != nil) != (wantErr != nil) || !reflect.DeepEqual(gotV, wantV) {
			t.Errorf("DecodeValue(%q) = %v, %v; encoding/json %v, %v", text, gotV, err, wantV, wantErr)
		}
		if ValidJSON([]byte(text)) != json.Valid([]byte(text)) {
			t.Errorf("ValidJSON(%q) = %v", text, !json.Valid([]byte(text)))
		}
		if wantErr == nil {
			enc, err := EncodeValue(wantV)
			var back any
			if err != nil || json.Unmarshal(enc, &back) != nil || !reflect.DeepEqual(back, wantV) {
				t.Errorf("EncodeValue(%v) = %s, %v", wantV, enc, err)
			}
		}
	}
	// Names are sorted, as encoding/json sorts a map's.
	enc, _ := EncodeValue(map[string]any{"b": 1, "a": map[string]any{"z": 1, "y": 2}})
	if string(enc) != `{"a":{"y":2,"z":1},"b":1}` {
		t.Errorf("EncodeValue: %s", enc)
	}
}
