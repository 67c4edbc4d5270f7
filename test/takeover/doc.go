// Package takeover holds the takeover test: a database written by Magnum
// 23.0.0 (the spec's schema and sample rows) is adopted with `db adopt`
// without any row changing, then served by `openkeel-magnum api`, which must
// answer the recorded read-only requests exactly as Magnum did.
package takeover
