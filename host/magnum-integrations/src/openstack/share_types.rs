//! Manila share types, for the Manila CSI add-on of the Cluster API
//! driver (its StorageClasses), as magnum-cluster-api lists them with the
//! user's token.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::clients::EndpointSettings;
use super::error::{OpenStackError, SettingsError};
use super::session::{Caller, MANILA, Service, Session, Target};

/// A Manila share type; `default` marks Manila's default type.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShareType {
    pub id: String,
    pub name: String,
    /// Manila's default type (`GET /types/default`).
    pub default: bool,
    /// The `driver_handles_share_servers` extra spec, when the type sets it
    /// to a boolean.
    pub driver_handles_share_servers: Option<bool>,
}

/// Lists Manila share types as the caller or, without a token, with the
/// service credentials. Cheap to clone.
#[derive(Clone, Debug)]
pub struct ShareTypes {
    manila: Service,
}

#[derive(Deserialize)]
struct ManilaType {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    extra_specs: Option<BTreeMap<String, Value>>,
    #[serde(default)]
    required_extra_specs: Option<BTreeMap<String, Value>>,
}

impl ManilaType {
    fn driver_handles_share_servers(&self) -> Option<bool> {
        const KEY: &str = "driver_handles_share_servers";
        [&self.extra_specs, &self.required_extra_specs]
            .into_iter()
            .flatten()
            .find_map(|specs| specs.get(KEY))
            .and_then(boolean)
    }
}

/// A boolean extra spec as Manila reads it (oslo's `bool_from_string`):
/// `True`, `true`, `1`, `yes`… or their opposites; anything else is not a
/// boolean.
fn boolean(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "t" | "1" | "yes" | "y" | "on" => Some(true),
            "false" | "f" | "0" | "no" | "n" | "off" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

impl ShareTypes {
    /// `manila` is `[manila_client]`; nothing is contacted.
    pub fn new(session: Session, manila: EndpointSettings) -> Result<Self, SettingsError> {
        Ok(Self {
            manila: Service::new(session, &MANILA, manila)?,
        })
    }

    /// The share types the caller sees (`GET /v2/types`), Manila's default
    /// type marked (`GET /v2/types/default`), or `None` when the catalog
    /// has no shared-file-system (`sharev2`) service.
    pub async fn list(&self, caller: &Caller) -> Result<Option<Vec<ShareType>>, OpenStackError> {
        const CONTEXT: &str = "manila: list share types";
        // Manila does not paginate share types, and marks the default in
        // the list itself only from microversion 2.46.
        #[derive(Deserialize)]
        struct List {
            #[serde(default)]
            share_types: Vec<ManilaType>,
        }
        #[derive(Deserialize)]
        struct Default {
            share_type: ManilaType,
        }
        let list = async |session: &Session, target: &Target| {
            let list: List = session
                .get(&target.who, format!("{}types", target.base), CONTEXT)
                .await?
                .expect(&[200], CONTEXT)?
                .json(CONTEXT)?;
            Ok(list.share_types)
        };
        let found = self
            .manila
            .types_with_default(caller, CONTEXT, list, |d: Default| d.share_type.id)
            .await?;
        let Some((types, default)) = found else {
            return Ok(None);
        };
        Ok(Some(
            types
                .into_iter()
                .map(|t| {
                    let driver_handles_share_servers = t.driver_handles_share_servers();
                    let id = t.id.unwrap_or_default();
                    ShareType {
                        default: default.as_deref() == Some(id.as_str()),
                        id,
                        name: t.name.unwrap_or_default(),
                        driver_handles_share_servers,
                    }
                })
                .collect(),
        ))
    }
}
