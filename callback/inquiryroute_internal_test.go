package callback

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestInquiryRoute: the paths of the inquiry route, and their shape.
func TestInquiryRoute(t *testing.T) {
	for path, want := range map[string]string{
		"/transfers/inquiry/019ac452":  "/transfers/inquiry/{id}",
		"/api/transfers/inquiry/b-7/":  "/api/transfers/inquiry/{id}",
		"/transfers/inquiry/":          "",
		"/transfers/inquiry//":         "",
		"/transfers/inquiry":           "",
		"/transfers/inquiryResolution": "",
		"/travelrule/callback":         "",
	} {
		shape, ok := inquiryRoute(path)
		assert.Equal(t, want != "", ok, path)
		assert.Equal(t, want, shape, path)
	}
}
