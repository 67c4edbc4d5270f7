// Package conductor holds the use cases that change state: what Magnum's
// conductor did, plus the service heartbeat. It is the only package that
// writes Magnum's tables.
package conductor
