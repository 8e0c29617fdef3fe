//go:build unix && !linux

package redisstore_test

import "syscall"

// dieWithParent: only Linux can end a child with its parent; elsewhere the
// clean-up stops the servers.
func dieWithParent() *syscall.SysProcAttr { return nil }
