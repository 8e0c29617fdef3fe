// Package journal follows every transfer this VASP started or received to
// its end.
package journal
