package traces

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/jetgraph/jetgraph/engine/tracing/trace"
)

// The run payloads of the trace stream are decoded with the v2 engine of
// github.com/go-json-experiment/json: it decodes a payload in one pass, several times faster
// than encoding/json, and hands out the text of inputs and outputs as it goes, which the run
// record keeps as sent. Its strict defaults are used, under which it gives the values
// encoding/json gives; a text they refuse (invalid UTF-8, a name twice in an object), which
// encoding/json accepts, is decoded again with encoding/json, so that the values are always
// encoding/json's (see trace.DecodeObject).

// textFields are the run fields whose JSON text is kept beside their decoded value.
var textFields = map[string]bool{"inputs": true, "outputs": true}

var payloadDecoders = sync.Pool{New: func() any { return new(jsontext.Decoder) }}

// decodeRunData reads a RunData: the run's fields decoded into raw, the text of its object
// inputs and outputs into text, and the blob it names, if any.
func decodeRunData(data []byte) (raw map[string]any, text map[string][]byte, blob *Blob, err error) {
	if raw, text, blob, err = decodeRunDataV2(data); err == nil {
		return raw, text, blob, nil
	}
	var d RunData
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, nil, nil, err
	}
	return d.Run, nil, d.Blob, nil
}

func decodeRunDataV2(data []byte) (raw map[string]any, text map[string][]byte, blob *Blob, err error) {
	dec := payloadDecoders.Get().(*jsontext.Decoder)
	defer func() {
		dec.Reset(bytes.NewBuffer(nil))
		payloadDecoders.Put(dec)
	}()
	dec.Reset(bytes.NewBuffer(data))
	if err := expectObject(dec); err != nil {
		return nil, nil, nil, err
	}
	for dec.PeekKind() != jsontext.KindEndObject {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, nil, nil, err
		}
		switch n := name.String(); {
		case strings.EqualFold(n, "run"): // (encoding/json matches names so)
			raw, text, err = decodeRunFields(dec, data)
		case strings.EqualFold(n, "blob"):
			blob = nil
			err = jsonv2.UnmarshalDecode(dec, &blob)
		default:
			err = dec.SkipValue()
		}
		if err != nil {
			return nil, nil, nil, err
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, nil, nil, err
	}
	return raw, text, blob, nil
}

// decodeRunFields reads a run object (or null) field by field; data is the decoder's input.
// Inputs are decoded only in part (the keys trace.DerivedInputKeys names), and their text kept.
func decodeRunFields(dec *jsontext.Decoder, data []byte) (map[string]any, map[string][]byte, error) {
	if dec.PeekKind() == jsontext.KindNull {
		_, err := dec.ReadToken()
		return nil, nil, err
	}
	if err := expectObject(dec); err != nil {
		return nil, nil, err
	}
	raw := make(map[string]any, 16)
	var text map[string][]byte
	for dec.PeekKind() != jsontext.KindEndObject {
		name, err := readName(dec)
		if err != nil {
			return nil, nil, err
		}
		if dec.PeekKind() == jsontext.KindString {
			// Most fields are strings (ids, names, times): read as a token, without the
			// generic decoder's boxed value.
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, nil, err
			}
			raw[name] = tok.String()
			continue
		}
		var v any
		if name == "inputs" && dec.PeekKind() == jsontext.KindBeginObject {
			// Only DeriveStored reads the decoded inputs here, and only some of their keys;
			// the record keeps their text.
			start := dec.InputOffset()
			m, err := decodeKeys(dec, trace.DerivedInputKeys)
			if err != nil {
				return nil, nil, err
			}
			if text == nil {
				text = make(map[string][]byte, 2)
			}
			text[name] = bytes.Clone(bytes.TrimLeft(data[start:dec.InputOffset()], " \t\r\n:"))
			v = m // (only ever stored as the text: textOf finds it by this map)
		} else if textFields[name] && dec.PeekKind() == jsontext.KindBeginObject {
			val, err := dec.ReadValue()
			if err != nil {
				return nil, nil, err
			}
			t := bytes.Clone(val)
			if err := jsonv2.Unmarshal(t, &v); err != nil {
				return nil, nil, err
			}
			if text == nil {
				text = make(map[string][]byte, 2)
			}
			text[name] = t
		} else {
			if err := jsonv2.UnmarshalDecode(dec, &v); err != nil {
				return nil, nil, err
			}
		}
		raw[name] = v
	}
	_, err := dec.ReadToken()
	return raw, text, err
}

// runNames are the names of the run fields clients send, interned so that reading a payload's
// names allocates no string for them.
var runNames = func() map[string]string {
	m := map[string]string{}
	for _, n := range []string{"id", "trace_id", "dotted_order", "parent_run_id", "name", "run_type", "start_time",
		"end_time", "session_name", "session_id", "error", "events", "tags", "extra", "inputs", "outputs",
		"serialized", "reference_example_id", "status", "attachments", "input_attachments", "output_attachments"} {
		m[n] = n
	}
	return m
}()

// readName reads an object member's name: the interned copy when it is a run field's name
// written without escapes.
func readName(dec *jsontext.Decoder) (string, error) {
	val, err := dec.ReadValue()
	if err != nil {
		return "", err
	}
	if len(val) >= 2 && val[0] == '"' && bytes.IndexByte(val, '\\') < 0 {
		if n, ok := runNames[string(val[1:len(val)-1])]; ok {
			return n, nil
		}
	}
	var name string
	if err := jsonv2.Unmarshal(val, &name); err != nil {
		return "", err
	}
	return name, nil
}

func expectObject(dec *jsontext.Decoder) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != jsontext.KindBeginObject {
		return fmt.Errorf("run payload: expected an object, found %s", tok.Kind())
	}
	return nil
}

// decodeKeys reads an object, decoding the values of keys and skipping the others.
func decodeKeys(dec *jsontext.Decoder, keys []string) (map[string]any, error) {
	if err := expectObject(dec); err != nil {
		return nil, err
	}
	m := map[string]any{}
	for dec.PeekKind() != jsontext.KindEndObject {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		if name := tok.String(); slices.Contains(keys, name) {
			var v any
			if err := jsonv2.UnmarshalDecode(dec, &v); err != nil {
				return nil, err
			}
			m[name] = v
		} else if err := dec.SkipValue(); err != nil {
			return nil, err
		}
	}
	_, err := dec.ReadToken()
	return m, err
}
