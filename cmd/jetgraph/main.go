// Command jetgraph is a self-hostable agent platform in one binary: a LangGraph-compatible
// runtime, event-sourced on NATS JetStream with bbolt projections. It serves the example graphs
// and a react agent, or the graphs of a graph.json (--config).
//
// Usage:
//
//	jetgraph [serve] [flags]               start the platform (the default)
//	jetgraph events <kind> <id> [--follow] print an aggregate's events as JSON lines
//	jetgraph projections rebuild           rebuild the projection file from the log
//	jetgraph bench runs                    drive a LangGraph-compatible server with runs
//	jetgraph version                       print the version
//
// A program of one's own serves its own graphs the same way: see package cli.
package main

import "github.com/jetgraph/jetgraph/cmd/jetgraph/cli"

func main() { cli.Main(cli.Program{}) }
