//go:build !linux

package supervise

import "syscall"

// procAttr puts a revision's process in a process group of its own (a terminal's Ctrl-C
// reaches the control plane alone, which drains it). Without Linux's parent-death signal, it
// outlives a control plane killed with -9 until its NATS connection fails.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
