// Package scenarios holds end-to-end tests that build the jetgraph binary,
// run it as a real process and drive it with the official LangGraph JS SDK
// (pinned in package.json), including kill -9 and restart on the same data
// directory. It has no non-test code.
package scenarios
