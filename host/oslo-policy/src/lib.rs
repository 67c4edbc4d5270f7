//! An oslo.policy-compatible rule engine: the rule language, policy files and
//! the enforcer's scope and deprecation semantics.
//!
//! It knows nothing of Magnum: the default rules of a service are given to it.
