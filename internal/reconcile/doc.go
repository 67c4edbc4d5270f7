// Package reconcile runs the background status loop that replaces Magnum's
// periodic status poller (magnum/service/periodic.py): every interval, the
// clusters in a *_IN_PROGRESS status are polled through their driver, the
// changes are saved through the conductor, and clusters that reached
// DELETE_COMPLETE are removed with their nodegroups.
//
// Only one instance reconciles at a time. The lease is a row of the
// magnum_service table (binary "openkeel-reconciler"), taken with SELECT …
// FOR UPDATE and renewed on every tick; an instance that stops renewing it
// loses it after the lease duration. No migration is needed.
package reconcile
