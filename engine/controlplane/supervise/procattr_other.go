//go:build !linux

package supervise

import "syscall"

// procAttr is the default: without Linux's parent-death signal, a revision's process outlives
// a control plane killed with -9 until its NATS connection fails.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
