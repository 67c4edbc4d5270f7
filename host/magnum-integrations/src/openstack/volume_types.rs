//! Cinder volume types, for the Cinder CSI add-on of the Cluster API driver.

use http::Method;
use serde::Deserialize;

use super::catalog::next_url;
use super::clients::{EndpointSettings, Link, next_link};
use super::error::{ErrorKind, OpenStackError, SettingsError};
use super::session::{Caller, Resolved, ServiceRef, Session};

/// The catalog types of Cinder's v3 API, newest name first.
const BLOCK_STORAGE_TYPES: [&str; 2] = ["block-storage", "volumev3"];
/// The pages of one list at most.
const MAX_PAGES: usize = 50;

/// A Cinder volume type; `default` marks Cinder's default type.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VolumeType {
    pub name: String,
    pub default: bool,
}

/// Lists Cinder volume types as the caller or, without a token, with the
/// service credentials. Cheap to clone.
#[derive(Clone, Debug)]
pub struct VolumeTypes {
    session: Session,
    cinder: EndpointSettings,
}

#[derive(Deserialize)]
struct NamedType {
    #[serde(default)]
    name: Option<String>,
}

impl VolumeTypes {
    /// `cinder` is `[cinder_client]`; nothing is contacted.
    pub fn new(session: Session, cinder: EndpointSettings) -> Result<Self, SettingsError> {
        cinder.check("cinder_client", "v3")?;
        Ok(Self { session, cinder })
    }

    /// The volume types the caller sees, Cinder's default type marked, or
    /// `None` when the catalog has no block-storage (or volumev3) service.
    pub async fn list(&self, caller: &Caller) -> Result<Option<Vec<VolumeType>>, OpenStackError> {
        const CONTEXT: &str = "cinder: list volume types";
        let svc = ServiceRef {
            name: "cinder",
            types: &BLOCK_STORAGE_TYPES,
            version: "v3",
            settings: &self.cinder,
        };
        let target = match self.session.target(caller, &svc).await? {
            Resolved::Found(t) => t,
            Resolved::Missing(_) => return Ok(None),
        };
        #[derive(Deserialize)]
        struct Page {
            #[serde(default)]
            volume_types: Vec<NamedType>,
            #[serde(default)]
            volume_types_links: Option<Vec<Link>>,
        }
        let collection = format!("{}types", target.base);
        let mut next = collection.clone();
        let mut names = Vec::new();
        for _ in 0..MAX_PAGES {
            let page: Page = self
                .session
                .send(&target.who, Method::GET, &next, None, CONTEXT)
                .await?
                .expect(&[200], CONTEXT)?
                .json(CONTEXT)?;
            let empty = page.volume_types.is_empty();
            names.extend(
                page.volume_types
                    .into_iter()
                    .map(|t| t.name.unwrap_or_default()),
            );
            let links = page.volume_types_links.unwrap_or_default();
            let Some(link) = next_link(&links) else {
                break;
            };
            if empty {
                break;
            }
            next = next_url(&collection, link)
                .map_err(|e| OpenStackError::new(CONTEXT, ErrorKind::Decode(e)))?;
        }
        // GET /types/default answers 404 when no default type is
        // configured: then no type is the default. Any other failure is
        // treated the same, as the list itself was read.
        #[derive(Deserialize)]
        struct Default {
            volume_type: NamedType,
        }
        let default = match self
            .session
            .send(
                &target.who,
                Method::GET,
                &format!("{}types/default", target.base),
                None,
                CONTEXT,
            )
            .await
        {
            Ok(r) if r.status == 200 => r
                .json::<Default>(CONTEXT)
                .ok()
                .and_then(|d| d.volume_type.name),
            _ => None,
        };
        Ok(Some(
            names
                .into_iter()
                .map(|name| VolumeType {
                    default: default.as_deref() == Some(name.as_str()),
                    name,
                })
                .collect(),
        ))
    }
}
