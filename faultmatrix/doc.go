// Package faultmatrix holds the fault matrix: a test, and nothing to
// import, that drives 44,400 transfer initiations through the public API
// against the sandbox (package travelruletest), over HTTP/1.1 and over
// HTTP/2 with TLS, with injected faults, and checks that no transfer is
// ever stored twice, that a call is sent again only after the service
// declared it did not act (or with an idempotency key), and that every
// attempt and outcome is accounted for. It lives apart from the root
// package's unit tests so that it runs in a test binary of its own, beside
// them, with its own time limit.
//
//	go test ./faultmatrix                                          # run it
//	go test ./faultmatrix -run TestFaultMatrix -update-reliability # rewrite docs/reliability.md
package faultmatrix
