package storetest_test

import (
	"testing"

	"github.com/vaspkit/travelrule/journal"
	"github.com/vaspkit/travelrule/journal/storetest"
)

// TestMemoryStore runs the suite on journal.MemoryStore; the stores that
// Open returns share one MemoryStore, as replicas share a backend.
func TestMemoryStore(t *testing.T) {
	shared := map[Config]journal.Store{}
	storetest.Run(t, func(t *testing.T, cfg storetest.Config) journal.Store {
		if s, ok := shared[Config(cfg)]; ok {
			return s
		}
		s := journal.NewMemoryStore(0, cfg.Retention)
		shared[Config(cfg)] = s
		return s
	})
}

// Config is storetest.Config, as a map key.
type Config storetest.Config
