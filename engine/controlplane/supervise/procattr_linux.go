package supervise

import "syscall"

// procAttr makes a revision's process get SIGTERM when the control plane dies without stopping
// it (kill -9): the restarted control plane starts the active revisions again.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
