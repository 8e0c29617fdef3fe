package main

import (
	"os"
	"os/exec"
	"testing"
)

// requireExternal is the variable that turns a test's skip for a missing
// external program into a failure; .ci/run sets it after installing them.
const requireExternal = "TRAVELRULE_REQUIRE_EXTERNAL"

// lookTool returns the path of the program name, or skips the test naming
// the Debian package that installs it (fails instead when requireExternal
// is set).
func lookTool(t *testing.T, name, debianPackage string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	msg := "this test runs " + name + ", which is not installed: install the Debian package " + debianPackage + " (apt-get install " + debianPackage + "); .ci/run does"
	if os.Getenv(requireExternal) != "" {
		t.Fatal(msg + " (" + requireExternal + " is set, so this is a failure)")
	}
	t.Skip(msg)
	return ""
}
