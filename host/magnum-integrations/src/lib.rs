//! What the service talks to besides its database: Keystone ([`auth`], the
//! caller of each request), the OpenStack services ([`openstack`]: the
//! catalog, the lookups, the drivers' grants), the certificate stores
//! ([`certs`]), the notification buses ([`notify`]), the management
//! cluster's Kubernetes client ([`management`]) and the OTLP collector
//! ([`traces`]).
//!
//! Each module owns its client, its timeouts and its errors; none of them
//! knows the use cases that call it.

pub mod auth;
pub mod certs;
pub mod management;
pub mod notify;
pub mod openstack;
pub mod traces;
