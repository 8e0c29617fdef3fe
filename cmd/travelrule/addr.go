package main

import (
	"errors"
	"fmt"
	"net"
	"strconv"
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

// checkListenAddr says what makes addr, the value of an --addr flag whose
// default is def, no HOST:PORT to listen on, in words that show the form
// wanted; nil when it is one. A bare port and an empty host are refused,
// not guessed: one means this machine only (127.0.0.1:PORT), the other
// every interface (0.0.0.0:PORT), and the user says which.
func checkListenAddr(addr, def string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		if isPort(addr) {
			return fmt.Errorf("--addr %s: want HOST:PORT, e.g. 127.0.0.1:%s (this machine only)", addr, addr)
		}
		return fmt.Errorf("--addr %s: want HOST:PORT, e.g. %s", addr, def)
	}
	switch {
	case !isPort(port):
		return fmt.Errorf("--addr %s: the port must be a number from 0 to 65535, e.g. %s", addr, def)
	case host == "":
		return fmt.Errorf("--addr %s: name the host: 127.0.0.1:%s for this machine only, 0.0.0.0:%s for every interface", addr, port, port)
	}
	return nil
}

// isPort reports whether s is a port number, 0 to 65535.
func isPort(s string) bool {
	_, err := strconv.ParseUint(s, 10, 16)
	return err == nil
}
