package main

import (
	"errors"
	"fmt"
	"syscall"
)

// The default addresses of the two commands that listen differ, so that a
// sandbox and a listener run side by side on one machine.
const (
	defaultSandboxAddr = "127.0.0.1:8080"
	defaultListenAddr  = "127.0.0.1:8081"
)

// listenFailure is what a command that could not listen on addr prints: a
// busy address is named with the flag that chooses another.
func listenFailure(cmd, addr string, err error) string {
	if addrInUse(err) {
		return fmt.Sprintf("%s: %s is already in use (another sandbox or listen?): choose another with --addr HOST:PORT", cmd, addr)
	}
	return fmt.Sprintf("%s: %v", cmd, err)
}

// addrInUse reports whether err says the address is in use.
func addrInUse(err error) bool { return errors.Is(err, syscall.EADDRINUSE) }
