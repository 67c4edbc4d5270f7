// Package magnum is the domain of openkeel-magnum: resource types, statuses,
// validation rules, the request context and the catalogue of client-visible
// errors. It performs no I/O.
package magnum
