//go:build unix

package redisstore_test

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// proxy is a TCP proxy in front of a server, as a load balancer or a
// service mesh's sidecar is: a test stops it (every connection through it
// closed, new ones refused) and starts it again on the same address, or
// holds what clients send, to let it through to the server later.
type proxy struct {
	Addr     string
	upstream string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{} // both sides of every connection
	pipes int                   // connections being proxied
	held  chan struct{}         // while holding: closed when released
	wg    sync.WaitGroup        // the proxy's goroutines
}

// startProxy starts a proxy to upstream on a free loopback port; it stops
// when the test ends.
func startProxy(t testing.TB, upstream string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{Addr: ln.Addr().String(), upstream: upstream, conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	t.Cleanup(p.Stop)
	return p
}

// Start listens again on the proxy's address, after Stop.
func (p *proxy) Start() error {
	var ln net.Listener
	var err error
	for attempt := 0; attempt < 50; attempt++ { // the port may still be closing
		if ln, err = net.Listen("tcp", p.Addr); err == nil {
			p.serve(ln)
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.pipe(c)
		}
	}()
}

// pipe connects the client c to the upstream server, forwarding each way
// until either side closes, and a closed client's last bytes before the
// server's answer ends.
func (p *proxy) pipe(c net.Conn) {
	u, err := net.Dial("tcp", p.upstream)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil { // stopped meanwhile
		p.mu.Unlock()
		_, _ = c.Close(), u.Close()
		return
	}
	p.conns[c], p.conns[u] = struct{}{}, struct{}{}
	p.pipes++
	p.mu.Unlock()
	var both sync.WaitGroup
	both.Add(2)
	p.wg.Add(1)
	go func() { // client to server, through the hold
		defer both.Done()
		buf := make([]byte, 32<<10)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				p.gate()
				if _, werr := u.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				_ = u.(*net.TCPConn).CloseWrite() // the server reads what came, then the end
				return
			}
		}
	}()
	go func() { // server to client
		defer both.Done()
		_, _ = io.Copy(c, u)
		_ = c.Close()
	}()
	go func() {
		defer p.wg.Done()
		both.Wait()
		_, _ = c.Close(), u.Close()
		p.mu.Lock()
		delete(p.conns, c)
		delete(p.conns, u)
		p.pipes--
		p.mu.Unlock()
	}()
}

// gate returns at once, or once the proxy is released if it is holding.
func (p *proxy) gate() {
	p.mu.Lock()
	h := p.held
	p.mu.Unlock()
	if h != nil {
		<-h
	}
}

// Hold keeps what clients send from then on in the proxy, until Release.
func (p *proxy) Hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held == nil {
		p.held = make(chan struct{})
	}
}

// Release lets what the proxy held through to the server.
func (p *proxy) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held != nil {
		close(p.held)
		p.held = nil
	}
}

// Stop closes the listener and every connection through the proxy, as a
// proxy that restarts does, and waits for its goroutines.
func (p *proxy) Stop() {
	p.Release()
	p.mu.Lock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// Pipes returns how many connections the proxy is forwarding.
func (p *proxy) Pipes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pipes
}
