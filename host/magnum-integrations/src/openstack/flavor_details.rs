//! Nova flavors with their extra specs (`os-extra_specs`), for what a
//! driver declares of a node's capacity: scale from zero needs the vCPUs,
//! the RAM and the GPUs of a flavor no node runs yet.

use std::collections::BTreeMap;

use http::Method;
use serde::Deserialize;

use super::Flavor;
use super::catalog::next_url;
use super::clients::{EndpointSettings, Link, MAX_PAGES, is_path_safe, next_link, path_segment};
use super::error::{ErrorKind, OpenStackError, SettingsError};
use super::flavors::NovaFlavor;
use super::session::{Caller, ServiceRef, Session, Target};

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
    session: Session,
    nova: EndpointSettings,
}

impl FlavorDetails {
    /// `nova` is `[nova_client]`; nothing is contacted.
    pub fn new(session: Session, nova: EndpointSettings) -> Result<Self, SettingsError> {
        nova.check("nova_client", "v2.1")?;
        Ok(Self { session, nova })
    }

    async fn compute(&self, caller: &Caller) -> Result<Target, OpenStackError> {
        self.session
            .required(caller, &ServiceRef::nova(&self.nova))
            .await
    }

    /// The flavor whose id or name is `ident`, with its extra specs, or
    /// `None` when the caller sees no such flavor.
    pub async fn get(
        &self,
        caller: &Caller,
        ident: &str,
    ) -> Result<Option<FlavorDetail>, OpenStackError> {
        let target = self.compute(caller).await?;
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
            .session
            .send(&target.who, Method::GET, &url, None, &context)
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

    /// The flavor whose id is `ident` (a direct GET), else the first one
    /// named (or with the id) `ident` in Nova's list.
    async fn find(&self, target: &Target, ident: &str) -> Result<Option<Flavor>, OpenStackError> {
        if is_path_safe(ident) {
            const SHOW: &str = "nova: show flavor";
            let url = format!("{}flavors/{}", target.base, path_segment(ident));
            let reply = self
                .session
                .send(&target.who, Method::GET, &url, None, SHOW)
                .await?;
            match reply.status {
                200 => {
                    #[derive(Deserialize)]
                    struct Show {
                        #[serde(default)]
                        flavor: Option<NovaFlavor>,
                    }
                    // Deviation: as in the lookups (flavors.rs), a flavor
                    // whose id is ident wins over another named ident.
                    if let Some(f) = reply.json::<Show>(SHOW)?.flavor
                        && f.id == ident
                    {
                        return Ok(Some(f.into()));
                    }
                }
                400 | 404 => {}
                s => return Err(OpenStackError::new(SHOW, ErrorKind::Status(s))),
            }
        }
        const LIST: &str = "nova: list flavors";
        #[derive(Deserialize)]
        struct Page {
            #[serde(default)]
            flavors: Vec<NovaFlavor>,
            #[serde(default)]
            flavors_links: Vec<Link>,
        }
        let collection = format!("{}flavors/detail", target.base);
        let mut next = collection.clone();
        for _ in 0..MAX_PAGES {
            let page: Page = self
                .session
                .send(&target.who, Method::GET, &next, None, LIST)
                .await?
                .expect(&[200], LIST)?
                .json(LIST)?;
            if let Some(f) = page
                .flavors
                .iter()
                .find(|f| f.name == ident || f.id == ident)
            {
                return Ok(Some(f.clone().into()));
            }
            let Some(link) = next_link(&page.flavors_links) else {
                break;
            };
            if page.flavors.is_empty() {
                break;
            }
            next = next_url(&collection, link)
                .map_err(|e| OpenStackError::new(LIST, ErrorKind::Decode(e)))?;
        }
        Ok(None)
    }
}
