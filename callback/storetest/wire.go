package storetest

import (
	"context"
	"net"
	"sync/atomic"
)

// Wire counts the round trips of the connections it dials, for
// [TestRoundTrips]: give its Dial to the store's client (pgconn's
// DialFunc, go-redis's Dialer). A round trip is a write that follows a
// read, or a connection's first write: a request, however many writes it
// takes, and its answer. The zero Wire is ready to use.
type Wire struct {
	// Dialer dials the connections (its zero value as net.Dialer's).
	Dialer net.Dialer
	trips  atomic.Int64
}

// Dial dials address with w.Dialer and counts the connection's round trips.
func (w *Wire) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := w.Dialer.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	wc := &wireConn{Conn: c, w: w}
	wc.read.Store(true)
	return wc, nil
}

// RoundTrips returns how many round trips the connections w dialed made.
func (w *Wire) RoundTrips() int64 { return w.trips.Load() }

// wireConn is a connection whose round trips count in w.
type wireConn struct {
	net.Conn
	w    *Wire
	read atomic.Bool // whether the last call was a read (or none was made)
}

func (c *wireConn) Write(p []byte) (int, error) {
	if c.read.Swap(false) {
		c.w.trips.Add(1)
	}
	return c.Conn.Write(p)
}

func (c *wireConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.read.Store(true)
	}
	return n, err
}
