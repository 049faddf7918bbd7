// Package routewalk holds the route-walking isolation test of issue 27: every operation of the
// served /openapi.json called by one user over another's ids, on the whole server the binary
// serves (the runtime with authorization rules, the tracing API and the control plane with the
// keys of two tenants). It is the assembly's test, not the runtime's: it wires all three
// bounded contexts, as cmd/jetgraph does. It has no code of its own.
package routewalk
