package pgstore

import "github.com/vaspkit/travelrule/journal"

// PageSQL is the statement, and its arguments, of the first page of
// s.Entries(ctx, q), for the tests that read its plan.
func PageSQL(s *JournalStore, q journal.Query) (string, []any) { return pageSQL(s.tables, q, nil) }
