// Package api is the HTTP layer of openkeel-magnum: the middleware pipeline
// (recover, request ID, CORS, proxy headers, path normalisation, Keystone
// authentication, microversion negotiation), the route table of the
// container-infra v1 API with Magnum's routing quirks, the version documents,
// the health check, the error writer producing Magnum's error bodies, and the
// resource handlers.
//
// Handlers have the shape func(http.ResponseWriter, *http.Request) error; a
// returned *magnum.Error is rendered in Magnum's {"errors": [...]} envelope,
// anything else as a 500 that does not leak internals.
package api
