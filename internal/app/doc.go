// Package app is the composition root: it turns config.Options into a
// database, an authenticator, a policy enforcer, a driver registry and the
// API handler, and runs the background work. It holds no business logic.
package app
