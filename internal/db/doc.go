// Package db is the persistence layer of openkeel-magnum: it opens MariaDB
// (MySQL protocol), PostgreSQL or SQLite databases holding Magnum's schema,
// migrates or adopts them, and reads and writes Magnum's tables with
// hand-written SQL, one file per table.
//
// The schema is Magnum 23.0.0's at Alembic head b3e1cf4a2d5e, kept
// compatible so that Python Magnum can still open the database (rollback).
// Rows are written the way Magnum writes them: UTC naive timestamps, JSON
// columns as TEXT in Python's json.dumps style, client-side defaults applied.
//
// Every dialect difference lives in dialect.go. Writes go through
// DB.InTx, the only place that retries deadlocks, lock wait timeouts and
// serialization failures.
package db
