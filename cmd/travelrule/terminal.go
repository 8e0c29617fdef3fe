package main

import (
	"io"
	"os"
)

// isTerminal reports whether r is a terminal: an *os.File that is a
// character device. A pipe, a regular file or any other reader is not.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
