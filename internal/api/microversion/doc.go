// Package microversion parses and negotiates the OpenStack-API-Version
// header of the container-infra API the way Magnum 23.0.0 does
// (magnum/api/controllers/versions.py and v1/__init__.py): no header means
// 1.1, "latest" means 1.14, three service names are accepted, a malformed
// value is refused with a plain 406 and a well-formed value outside 1.1–1.14
// with the microversion-unsupported 406.
package microversion
