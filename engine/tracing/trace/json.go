package trace

import (
	"encoding/json"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The JSON of ingested runs is decoded, checked and encoded on the hot path of ingestion and of
// the trace projection, with the v2 engine of github.com/go-json-experiment/json: several times
// faster than encoding/json on these payloads. Its strict defaults are used, under which it
// gives the values encoding/json gives; the texts they refuse and encoding/json accepts
// (invalid UTF-8, a name twice in an object) are handled by encoding/json, so that results are
// always encoding/json's.

// DecodeObject decodes b, a JSON object or null, into *v as json.Unmarshal does.
func DecodeObject(b []byte, v *map[string]any) error {
	var x any // (decoding into an any takes the v2 engine's fastest path)
	if jsonv2.Unmarshal(b, &x) == nil {
		if m, ok := x.(map[string]any); ok || x == nil {
			*v = m
			return nil
		}
	}
	*v = nil
	return json.Unmarshal(b, v)
}

// DecodeValue decodes b, one JSON value, into *v as json.Unmarshal does.
func DecodeValue(b []byte, v *any) error {
	if jsonv2.Unmarshal(b, v) == nil {
		return nil
	}
	*v = nil
	return json.Unmarshal(b, v)
}

// ValidJSON reports whether b is one JSON value, as json.Valid does.
func ValidJSON(b []byte) bool { return jsontext.Value(b).IsValid() || json.Valid(b) }

// deterministic makes objects encode with sorted names, as encoding/json encodes maps.
var deterministic = jsonv2.Deterministic(true)

// EncodeValue encodes a decoded JSON value (what DecodeObject gives: maps, lists, strings,
// float64, bools, nil) to text that decodes to the same value, names sorted as encoding/json
// sorts them. Unlike encoding/json, it does not escape <, > and &. What the v2 engine refuses
// (a string of invalid UTF-8) is encoded by encoding/json.
func EncodeValue(v any) ([]byte, error) {
	x := v // (encoding through an *any takes the v2 engine's fastest path)
	if b, err := jsonv2.Marshal(&x, deterministic); err == nil {
		return b, nil
	}
	return json.Marshal(v)
}
