package pgstore_test

import "syscall"

// procAttr runs a server as cred (nil: as this process), in a process
// group of its own, and shuts it down if this process dies first, so that
// a test binary that panics leaves no server behind.
func procAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGQUIT}
}
