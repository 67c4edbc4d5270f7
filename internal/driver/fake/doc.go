// Package fake is an in-memory cluster driver named "fake", for tests and
// the all-in-one mode. It builds nothing: it simulates Magnum's cluster
// lifecycle deterministically.
//
// # Cluster types
//
// It provides (vm, <os>, kubernetes) for os in centos, debian, fedora-atomic,
// fedora-coreos, flatcar, rockylinux, ubuntu and ubuntu-focal, so templates
// built on images with any of these os_distro values can use it.
//
// # Lifecycle
//
// Every operation returns at once and leaves the rows in *_IN_PROGRESS (the
// cluster, and the nodegroups it touches). PollStatus turns them into
// *_COMPLETE once the configured delay (Options.Delay, default 0) has passed
// on the injected clock (Options.Clock). On completion it fills in:
//
//   - stack_id: "kube-" and five characters derived from the cluster UUID
//     (set by CreateCluster and CreateNodeGroup);
//   - node_addresses of each nodegroup: one fake IPv4 address in 10.0.0.0/8
//     per node, derived from the cluster UUID, the nodegroup name and the
//     node's index; nodes are named "<stack_id>-<nodegroup>-<index>" and have
//     a fake Nova server UUID derived the same way (see Nodes);
//   - api_address: "https://<fake ip>:6443";
//   - coe_version: the cluster label kube_tag, else the template's kube_tag,
//     else v1.31.1; also written to each completed nodegroup's version;
//   - health_status HEALTHY and health_status_reason
//     {"<node name>.Ready": "True", …, "api": "ok"} (the CAPI driver's
//     format, driver-capi.md § 5.4).
//
// A resize removes the nodes listed in nodes_to_remove (matched by server
// UUID, node name or IP address), then adds new nodes (new indices) or
// removes the highest indices until the nodegroup has node_count nodes. With
// an unchanged node_count this replaces the listed nodes, which is what
// magnum-auto-healer asks for. A deleted cluster reaches DELETE_COMPLETE; a
// deleted non-default nodegroup reaches DELETE_COMPLETE and is returned in
// Update.DeletedNodeGroups. The master nodegroup may be resized to any odd
// count ≥ 1. CA rotation and credential rotation are supported.
//
// # Failure injection (cluster labels; nodegroup labels for nodegroup operations)
//
//   - fake_fail=<op>[,<op>…]: the operation is accepted, and the poll ends it
//     in *_FAILED (cluster and affected nodegroups) with status_reason
//     fake_fail_reason (default "fake driver: injected <op> failure").
//   - fake_error=<op>[,<op>…]: the driver method itself returns an error
//     with the same text, as a failing Magnum driver raises; the conductor
//     then marks the rows *_FAILED.
//   - fake_no_ca_rotation=true: CanRotateCA and RotateCA refuse with 400
//     "'rotate_ca_certificate' is not supported by this driver.".
//   - fake_no_credential_rotation=true: RotateCredential refuses with 400
//     "Credential rotation is not supported by driver.".
//
// Operation names: create, update (PATCH node_count), delete, resize,
// upgrade, nodegroup_create, nodegroup_update, nodegroup_delete, rotate_ca.
//
// # State and restarts
//
// Pending operations (start time, kind, affected nodegroups) and node
// memberships are kept in memory, keyed by cluster and nodegroup UUID, under
// one mutex. Everything else is derived from the rows passed in, so the
// driver also works after a restart: a cluster found *_IN_PROGRESS with no
// in-memory operation completes on the next poll (its operation kind is
// taken from the status: CREATE → create, DELETE → delete, UPDATE →
// update), and node memberships are recovered from the nodegroups'
// node_addresses.
package fake
