//! The real clients of Magnum, unmodified and installed from their
//! registries, against the binary under test with a real Keystone in front.
//! The binary is chosen explicitly: `$OKM_CLIENTS_BINARY` is its path, or
//! `cargo` for the one cargo built for this run; when it is unset, every
//! suite skips (also with `CI=true`). The suites:
//!
//! - the `openstack coe` command matrix (python-openstackclient and
//!   python-magnumclient, `OPENKEEL_TEST_OPENSTACK_CLI`), with Keystone and,
//!   on `all-in-one`, without it;
//! - magnum-tempest-plugin's API tests (`OPENKEEL_TEST_TEMPEST`) and
//!   openstacksdk's functional tests (`OPENKEEL_TEST_SDK_PYTHON`);
//! - Skyline's Container Infra pages in headless Chromium, driven by
//!   Playwright (`OKM_SKYLINE_PYTHON`, `OKM_NGINX`, `OKM_CHROMIUM`);
//! - gophercloud's upstream acceptance tests, run from the Go module cache,
//!   and the Go clients of `tests/clients/go` (gophercloud's containerinfra
//!   packages, magnum-auto-healer's OpenStack provider, the
//!   cluster-autoscaler's call sequence), `OPENKEEL_TEST_GOPHERCLOUD`.
//!
//! Every suite but the `all-in-one` one needs `OPENKEEL_TEST_KEYSTONE_URL`
//! and the passwords of `scripts/ci/keystone.sh`. Each suite starts its own
//! stack ([`harness::Stack`]): the OpenStack double (`okm-osfake`, with the
//! Nova keypair, server and version-discovery routes the clients need in
//! front of it), `openkeel-magnum db upgrade`, `api` (SQLite,
//! `[keystone_authtoken]`, the fake driver) behind a recording proxy, and
//! `reconciler`, and Keystone catalog entries for them in a region of its
//! own (`okm-clients`). When a check fails, the HTTP exchanges the client
//! had with the service are printed.
//!
//! The suites share that region, so they run one at a time whatever the
//! test threads; two runs must not share a Keystone. The counts of checks
//! run and passed per suite go to `$OKM_CLIENT_REPORT` (TSV) when it is set.
//!
//! ```sh
//! eval "$(scripts/ci/keystone.sh)"
//! eval "$(scripts/ci/openstack-cli.sh)"
//! eval "$(scripts/ci/client-suites.sh)"
//! OKM_CLIENTS_BINARY=cargo cargo test -p openkeel-magnum --test clients -- --nocapture
//! ```

mod capi;
mod capi_goldens;
// The management cluster and the Cluster API simulator of the e2e suites.
#[allow(dead_code)]
#[path = "../e2e/capi_sim.rs"]
mod capi_sim;
mod faults;
mod golang;
mod harness;
#[allow(dead_code)]
#[path = "../e2e/kube.rs"]
mod kube;
mod noauth;
mod osc;
mod proxy;
mod sdk;
mod skyline;
// Fresh databases on the shared MariaDB and PostgreSQL servers.
#[allow(dead_code)]
#[path = "../e2e/sql.rs"]
mod sql;
mod tempest;
