//! Cinder volume types, for the Cinder CSI add-on of the Cluster API driver.

use std::ops::ControlFlow;

use serde::Deserialize;

use super::clients::{EndpointSettings, Link, Listing, MAX_PAGES};
use super::error::{OpenStackError, SettingsError};
use super::session::{CINDER, Caller, Service, Session, Target};

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
    cinder: Service,
}

#[derive(Deserialize)]
struct NamedType {
    #[serde(default)]
    name: Option<String>,
}

impl VolumeTypes {
    /// `cinder` is `[cinder_client]`; nothing is contacted.
    pub fn new(session: Session, cinder: EndpointSettings) -> Result<Self, SettingsError> {
        Ok(Self {
            cinder: Service::new(session, &CINDER, cinder)?,
        })
    }

    /// The volume types the caller sees, Cinder's default type marked, or
    /// `None` when the catalog has no block-storage (or volumev3) service.
    pub async fn list(&self, caller: &Caller) -> Result<Option<Vec<VolumeType>>, OpenStackError> {
        const CONTEXT: &str = "cinder: list volume types";
        #[derive(Deserialize)]
        struct Page {
            #[serde(default)]
            volume_types: Vec<NamedType>,
            #[serde(default)]
            volume_types_links: Option<Vec<Link>>,
        }
        #[derive(Deserialize)]
        struct Default {
            volume_type: NamedType,
        }
        let list = async |session: &Session, target: &Target| {
            let collection = format!("{}types", target.base);
            let listing = Listing {
                collection: &collection,
                first: collection.clone(),
                max_pages: MAX_PAGES,
                context: CONTEXT,
            };
            let mut names = Vec::new();
            listing
                .walk(
                    |url| session.get(&target.who, url, CONTEXT),
                    |page: Page| {
                        Ok((
                            page.volume_types,
                            page.volume_types_links.unwrap_or_default(),
                        ))
                    },
                    |types| {
                        names.extend(types.into_iter().map(|t| t.name.unwrap_or_default()));
                        ControlFlow::<()>::Continue(())
                    },
                )
                .await?;
            Ok(names)
        };
        let found = self
            .cinder
            .types_with_default(caller, CONTEXT, list, |d: Default| d.volume_type.name)
            .await?;
        let Some((names, default)) = found else {
            return Ok(None);
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
