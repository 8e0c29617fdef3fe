package pgstore

import "github.com/vaspkit/travelrule/journal"

// PageSQL is the statement, and its arguments, of the first page of
// s.Entries(ctx, q), for the tests that read its plan.
func PageSQL(s *JournalStore, q journal.Query) (string, []any) { return pageSQL(s.tables, q, nil) }

// Statements is the SQL of the store's statements that read an entry
// or a name by its key: a Write's, Lookup's, Records' and Close's.
func Statements(s *JournalStore) map[string]string {
	return map[string]string{"lock": s.sql.lock, "write": s.sql.write, "read": s.sql.read, "lookup": s.sql.lookup, "records": s.sql.records,
		"lockEntry": s.sql.lockEntry, "close": s.sql.close}
}
