package redisstore_test

import "syscall"

// dieWithParent makes a server end with this test binary, even when the
// binary is killed (by go test's -timeout, say) before its clean-up runs.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
