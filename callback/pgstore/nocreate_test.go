package pgstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vaspkit/travelrule/callback/pgstore"
)

// TestWithoutCreatingTables: with the option, New and NewJournal fail on
// absent tables and create nothing; on tables that exist they open.
func TestWithoutCreatingTables(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t, sharedServer(t), 4)
	exists := func(name string) bool {
		var ok bool
		require.NoError(t, pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", name).Scan(&ok))
		return ok
	}

	journalTable := newTableName(t)
	_, err := pgstore.NewJournal(ctx, pool, pgstore.WithTable(journalTable), pgstore.WithoutCreatingTables())
	require.ErrorIs(t, err, pgstore.ErrTableAbsent)
	assert.False(t, exists(journalTable), "a table was created")
	assert.False(t, exists(journalTable+"_entries"))
	_, err = pgstore.NewJournal(ctx, pool, pgstore.WithTable(journalTable))
	require.NoError(t, err)
	_, err = pgstore.NewJournal(ctx, pool, pgstore.WithTable(journalTable), pgstore.WithoutCreatingTables())
	assert.NoError(t, err, "the tables exist now")

	storeTable := newTableName(t)
	_, err = pgstore.New(ctx, pool, pgstore.WithTable(storeTable), pgstore.WithoutCreatingTables())
	require.ErrorIs(t, err, pgstore.ErrTableAbsent)
	assert.False(t, exists(storeTable))
	_, err = pgstore.New(ctx, pool, pgstore.WithTable(storeTable))
	require.NoError(t, err)
	_, err = pgstore.New(ctx, pool, pgstore.WithTable(storeTable), pgstore.WithoutCreatingTables())
	assert.NoError(t, err)
}
