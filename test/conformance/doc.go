// Package conformance replays the HTTP exchanges recorded from Magnum's own
// API tests (spec/exchanges/exchanges.json) against the openkeel-magnum API
// handler and compares status, the headers that matter, and the bodies, as
// spec/exchanges/README.md describes.
package conformance
