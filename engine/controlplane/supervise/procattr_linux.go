package supervise

import "syscall"

// procAttr makes a revision's process get SIGTERM when the control plane dies without stopping
// it (kill -9): the restarted control plane starts the active revisions again. The process is
// in a process group of its own, so that a terminal's Ctrl-C (SIGINT to the foreground group)
// reaches the control plane alone, which then drains and stops its revisions in order instead
// of seeing them stop behind its back (and starting them again).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
}
