// Package fastpath is benchlab's fast client path, an option of the server
// engines (a target's client = "fast", the default where it applies; see
// docs/engines-and-servers.md): short statements are exchanged with the
// server on the driver's own connection, in protocol messages built in
// reused buffers, over sockets that wait in blocking system calls as the C
// clients do, so that a run measures the server and not the Go drivers'
// per-call work (on the point query at 8 threads, the drivers' machinery
// was 30-40% of the client's CPU).
//
// The plain drivers (pgx, go-sql-driver/mysql) are the fallback everywhere:
// client = "driver" on a target, any system but Linux (Supported), a
// connection over TLS, and a server whose answer to the probe at connect
// (ProbeMySQL, ProbePostgres) is not the one expected.
//
// What the package relies on, and only here:
//   - pgx: its documented protocol layer (pgconn.PgConn's Frontend, Conn,
//     IsClosed, Close); a call runs only while pgconn is idle, and leaves
//     pgconn's record of the transaction status and server parameters as
//     it was (benchlab reads neither).
//   - go-sql-driver/mysql: its public DialFunc gives the socket; what is
//     not its API is that between two commands the driver has nothing
//     buffered and expects nothing, so benchlab may write a whole command
//     and read its whole answer itself. The protocol (sequence numbers
//     restart with each command) makes that hold for any client, and the
//     capabilities the driver negotiated (EOF packets deprecated or not,
//     MariaDB's metadata caching) are learnt from the server's answers,
//     never read from the driver. TestDirectMatchesDriver in the mysql
//     engine runs both paths on one connection so that a driver upgrade
//     that breaks this shows.
package fastpath
