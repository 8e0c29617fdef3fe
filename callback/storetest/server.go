package storetest

import (
	"errors"
	"os"
	"os/exec"
)

// ServerCPU is the variable that pins the servers the stores' tests start
// to the cores it lists, in taskset's form ("0", "1", "0-1"), so that a
// benchmark can measure a store whose server shares the client's pinned
// core or has one of its own. Unset, a server runs where the test binary
// may: on its core when the binary is pinned.
const ServerCPU = "TRAVELRULE_BENCH_SERVER_CPU"

// ServerCommand returns exec.Command(name, arg...), run through taskset
// on the cores that [ServerCPU] lists when it is set. taskset executes the
// server in its own process, so the command's process is the server's.
func ServerCommand(name string, arg ...string) (*exec.Cmd, error) {
	cpus := os.Getenv(ServerCPU)
	if cpus == "" {
		return exec.Command(name, arg...), nil
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		return nil, errors.New("storetest: " + ServerCPU + " is set, and taskset is not installed (Debian package util-linux)")
	}
	return exec.Command(taskset, append([]string{"-c", cpus, name}, arg...)...), nil
}
