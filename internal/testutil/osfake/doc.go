// Package osfake is an in-process test double of the parts of Glance v2,
// Nova v2.1 and Neutron v2.0 that openkeel-magnum reads with the caller's
// token: image show and list, flavor show and list, keypair show, network and
// subnet show and list.
//
// The double is an httptest.Server on 127.0.0.1 that speaks the real HTTP
// shapes (Glance image properties at the top level of the image object,
// Nova's {"flavor":{...}} envelopes and flavors_links, Neutron's filters and
// NeutronError bodies). It is seeded from Go structs, records every request
// so that tests can assert that lookups are filtered and never list a whole
// collection, and injects faults (an HTTP status, or a response that never
// comes so that client timeouts can be exercised).
//
// Layout of the server: each service sits under a path prefix, and each
// Keystone interface under another one, so that tests can tell from the
// recorded calls which catalog entry a client picked:
//
//	{URL}/image                  Glance root (the client appends /v2)
//	{URL}/compute/v2.1           Nova endpoint as Keystone lists it
//	{URL}/network                Neutron root (the client appends /v2.0)
//	{URL}/internal/..., {URL}/admin/...   the same for the other interfaces
package osfake
