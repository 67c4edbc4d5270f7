// Package driver is the published contract between the conductor and the
// code that builds clusters: the Driver interface, the registry of installed
// drivers (filled from init functions, as Magnum fills its registry from the
// "magnum.drivers" entry points), the [drivers] selection options, and the
// driver resolution rules of Magnum's API (template create and cluster
// create).
//
// A driver package imports this package and registers itself:
//
//	func init() { driver.Register(New(Options{})) }
//
// and is linked into the binary by a blank import in cmd/openkeel-magnum.
// The core never imports a driver package.
//
// Drivers never write to the database. Every mutating method receives a
// snapshot of the rows (ClusterState) and returns an Update: copies of the
// rows the conductor must save, plus the nodegroup rows to destroy. The
// status poll (PollStatus) works the same way and replaces Magnum's
// update_cluster_status and the health monitor.
package driver
