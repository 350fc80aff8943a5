// Package all links every engine and workload into the binary; each registers
// itself from init.
package all

import (
	_ "benchlab/internal/engine/dbbench"         // RocksDB db_bench binaries
	_ "benchlab/internal/engine/ferretdb"        // FerretDB started per run (MongoDB protocol over SQLite or PostgreSQL)
	_ "benchlab/internal/engine/galera"          // MariaDB Galera clusters (nodes and HAProxy on loopback)
	_ "benchlab/internal/engine/mariadbreplicas" // MariaDB primary with binlog replicas (loopback)
	_ "benchlab/internal/engine/mongodb"         // MongoDB-protocol servers by DSN
	_ "benchlab/internal/engine/mysql"           // MySQL and MariaDB engines (managed servers and DSNs)
	_ "benchlab/internal/engine/pebble"          // Pebble engine (pure Go LSM)
	_ "benchlab/internal/engine/pgbouncer"       // PgBouncer in front of PostgreSQL (both on loopback)
	_ "benchlab/internal/engine/pgreplicas"      // PostgreSQL primary with streaming replicas (loopback)
	_ "benchlab/internal/engine/postgres"        // PostgreSQL engine (managed servers and DSNs)
	_ "benchlab/internal/engine/rocksdb"         // RocksDB in-process (-tags rocksdb; a stand-in otherwise)
	_ "benchlab/internal/engine/sqlite"          // SQLite engine
	_ "benchlab/internal/workload/cluster"       // cluster scenarios (galera): stale reads, write scaling, failover
	_ "benchlab/internal/workload/command"       // outside programs (fio, pgbench, scripts) as steps
	_ "benchlab/internal/workload/connect"       // connection cost
	_ "benchlab/internal/workload/custom"        // custom SQL from the spec
	_ "benchlab/internal/workload/docbench"      // document micro-benchmarks (MongoDB protocol)
	_ "benchlab/internal/workload/insertbench"   // Insert Benchmark
	_ "benchlab/internal/workload/kv"            // db_bench step sequence
	_ "benchlab/internal/workload/sysbench"      // sysbench microbenchmarks
	_ "benchlab/internal/workload/tpcc"          // TPC-C
)
