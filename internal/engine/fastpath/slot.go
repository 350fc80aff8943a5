package fastpath

import (
	"context"
	"net"
)

type slotKey struct{}

// Slot receives the socket a driver dials within one connect call, for a
// driver that does not hand its socket out (go-sql-driver/mysql).
type Slot struct{ c net.Conn }

// WithSlot returns ctx carrying a new Slot, for one connect call.
func WithSlot(ctx context.Context) (context.Context, *Slot) {
	s := &Slot{}
	return context.WithValue(ctx, slotKey{}, s), s
}

// Conn is the socket dialled under the Slot's context, or nil.
func (s *Slot) Conn() net.Conn { return s.c }

// DialRecorded dials as Dial does and notes the socket in ctx's Slot, if
// ctx has one. Its signature is go-sql-driver's Config.DialFunc.
func DialRecorded(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := Dial(ctx, network, addr)
	if err == nil {
		if s, ok := ctx.Value(slotKey{}).(*Slot); ok {
			s.c = c
		}
	}
	return c, err
}
