// Package openstack reads the OpenStack resources a cluster or cluster
// template names (Glance images, Nova flavors and keypairs, Neutron networks
// and subnets) as the calling user, the way Magnum's attribute validators
// do (magnum/api/attr_validator.py), and answers with Magnum's errors.
//
// Calls are made with the caller's Keystone token (RequestContext.AuthToken)
// against the endpoints of the token's service catalog, selected like
// keystoneauth does from the [glance_client], [nova_client] and
// [neutron_client] region_name and endpoint_type options. Fixed endpoints
// can replace the catalog (tests, single-node setups).
//
// Unlike Magnum, which lists every flavor, network and subnet for each
// validated attribute, lookups use direct GETs and filtered lists (see
// Lookup); the outcome and the error messages are the same.
//
// Static answers the same questions from built-in data for the all-in-one
// mode, where there is no OpenStack cloud.
package openstack
