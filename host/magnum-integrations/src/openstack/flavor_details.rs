//! Nova flavors with their extra specs (`os-extra_specs`), for what a
//! driver declares of a node's capacity: scale from zero needs the vCPUs,
//! the RAM and the GPUs of a flavor no node runs yet.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::Flavor;
use super::clients::{EndpointSettings, path_segment};
use super::error::{OpenStackError, SettingsError};
use super::flavors::find_flavor;
use super::session::{Caller, NOVA, Service, Session, Target};

/// A Nova flavor and its extra specs (`resources:VGPU`,
/// `pci_passthrough:alias`, `hw:cpu_policy`…).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlavorDetail {
    /// The flavor's id, name and sizes.
    pub flavor: Flavor,
    /// The extra specs, as Nova keeps them (strings).
    pub extra_specs: BTreeMap<String, String>,
}

/// Reads Nova flavors by id or name with their extra specs, as the caller
/// or, without a token, with the service credentials. Cheap to clone.
///
/// Requests: `GET /flavors/{x}`; when that is 404 or 400 (or names
/// another flavor), `GET /flavors/detail` page by page until the first
/// flavor named `x` (Nova has no name filter); then `GET
/// /flavors/{id}/os-extra_specs`. The matching is the one of
/// [`super::Lookup::flavor`].
#[derive(Clone, Debug)]
pub struct FlavorDetails {
    nova: Service,
}

impl FlavorDetails {
    /// `nova` is `[nova_client]`; nothing is contacted.
    pub fn new(session: Session, nova: EndpointSettings) -> Result<Self, SettingsError> {
        Ok(Self {
            nova: Service::new(session, &NOVA, nova)?,
        })
    }

    /// The flavor whose id or name is `ident`, with its extra specs, or
    /// `None` when the caller sees no such flavor.
    pub async fn get(
        &self,
        caller: &Caller,
        ident: &str,
    ) -> Result<Option<FlavorDetail>, OpenStackError> {
        let target = self.nova.required(caller).await?;
        let Some(flavor) = self.find(&target, ident).await? else {
            return Ok(None);
        };
        let context = format!("nova: show the extra specs of flavor {}", flavor.id);
        #[derive(Deserialize)]
        struct Specs {
            #[serde(default)]
            extra_specs: Option<BTreeMap<String, serde_json::Value>>,
        }
        let url = format!(
            "{}flavors/{}/os-extra_specs",
            target.base,
            path_segment(&flavor.id)
        );
        let specs: Specs = self
            .nova
            .session()
            .get(&target.who, url, &context)
            .await?
            .expect(&[200], &context)?
            .json(&context)?;
        // Nova keeps every extra spec as a string; anything else is shown
        // as its JSON text rather than dropped.
        let extra_specs = specs
            .extra_specs
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => (k, s),
                other => (k, other.to_string()),
            })
            .collect();
        Ok(Some(FlavorDetail {
            flavor,
            extra_specs,
        }))
    }

    /// The flavor whose id or name is `ident`, see [`find_flavor`].
    async fn find(&self, target: &Target, ident: &str) -> Result<Option<Flavor>, OpenStackError> {
        let session = self.nova.session();
        find_flavor(&target.base, ident, |url, context| {
            session.get(&target.who, url, context)
        })
        .await
    }
}
