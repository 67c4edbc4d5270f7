//! Black-box suite: the built binary driven as an operator and a client
//! would. See docs/testing.md.

mod admin;
mod capi_objects;
mod capi_sim;
mod capi_sim_tests;
mod certificates;
mod cli;
mod conformance;
mod driver_test;
mod foundation;
mod harness;
mod helm;
mod hostile;
mod keystone;
mod kube;
mod metrics;
mod notifications;
mod readers;
mod sdk;
mod sql;
mod sweep;
mod takeover;
mod takeover_steps;
mod traces;
mod upgrade_check;
mod watch;
