//go:build unix && !linux

package pgstore_test

import "syscall"

// procAttr runs a server as cred (nil: as this process), in a process
// group of its own.
func procAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true}
}
