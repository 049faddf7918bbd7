// Package jsoncount counts the JSON documents the run path encodes and decodes, so that a
// benchmark can report them per run (BenchmarkEchoRunCounts in httpapi). The codec calls of the
// run path's seams (event data, projection records, request and answer bodies, checkpoints,
// self-traces) add one each; a count is one atomic add, cheap enough to stay in the build.
package jsoncount

import "sync/atomic"

var encodes, decodes atomic.Uint64

// Encoded counts one JSON document encoded.
func Encoded() { encodes.Add(1) }

// Decoded counts one JSON document decoded.
func Decoded() { decodes.Add(1) }

// Counts returns the documents encoded and decoded since the process started.
func Counts() (encoded, decoded uint64) { return encodes.Load(), decodes.Load() }
