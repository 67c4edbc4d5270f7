//! The driver host's integration tests: the fake driver through the host
//! (the Go fake driver's tests, case for case), the sandbox cases with
//! purpose-built components, the contract's versions side by side, and
//! the `driver` subcommands' reports.

mod common;
mod contract;
mod fake;
mod reports;
mod sandbox;
