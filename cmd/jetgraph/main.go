// Command jetgraph is a self-hostable agent platform in one binary: a LangGraph-compatible
// runtime, event-sourced on NATS JetStream with bbolt projections.
//
// Usage:
//
//	jetgraph [serve] [flags]              start the platform (the default)
//	jetgraph events <kind> <id> [--follow] print an aggregate's events as JSON lines
//	jetgraph projections rebuild           rebuild the projection file from the log
package main

import "github.com/jetgraph/jetgraph/cmd/jetgraph/cli"

func main() { cli.Main() }
