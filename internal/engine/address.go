package engine

// Address is how a program outside benchlab reaches an opened database:
// the facts the command suite puts in a command's environment.
type Address struct {
	// Host and Port reach a server over TCP; empty and 0 for an embedded
	// engine.
	Host string
	Port int
	// User, Password and Database are what a client logs in with; the
	// servers benchlab starts always have a Password (generated per run),
	// which reaches programs only through Env.
	User, Password, Database string
	// DSN reaches the database in the form the engine's own client library
	// takes (a libpq key=value string, a go-sql-driver/mysql DSN, a SQLite
	// file path), never with the password.
	DSN string
	// Env are the variables the engine family's own clients read
	// (PGHOST, PGPORT, ... for PostgreSQL; MYSQL_HOST, MYSQL_TCP_PORT, ...
	// for MySQL), as KEY=value, so that psql, pgbench, mysql or sysbench
	// started with them reach this database without options.
	Env []string
}

// Addresser is implemented by DBs that programs outside benchlab can reach
// (servers, a database file).
type Addresser interface {
	Address() Address
}
