package callback

const redacted = "[redacted]"

// mask returns redacted for a non-empty secret, "" otherwise, so that
// redacted output still shows which secrets are set.
func mask(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return redacted
}
