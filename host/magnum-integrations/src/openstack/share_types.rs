//! Manila share types, for the Manila CSI add-on of the Cluster API
//! driver (its StorageClasses), as magnum-cluster-api lists them with the
//! user's token.

use std::collections::BTreeMap;

use http::Method;
use serde::Deserialize;
use serde_json::Value;

use super::clients::EndpointSettings;
use super::error::{OpenStackError, SettingsError};
use super::session::{Caller, Resolved, ServiceRef, Session};

/// The catalog types of Manila's v2 API: the one magnum-cluster-api looks
/// for first, then the service-types authority's name.
const SHARE_TYPES: [&str; 2] = ["sharev2", "shared-file-system"];

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
    session: Session,
    manila: EndpointSettings,
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
        manila.check("manila_client", "v2")?;
        Ok(Self { session, manila })
    }

    /// The share types the caller sees (`GET /v2/types`), Manila's default
    /// type marked (`GET /v2/types/default`), or `None` when the catalog
    /// has no shared-file-system (`sharev2`) service.
    pub async fn list(&self, caller: &Caller) -> Result<Option<Vec<ShareType>>, OpenStackError> {
        const CONTEXT: &str = "manila: list share types";
        let svc = ServiceRef {
            name: "manila",
            types: &SHARE_TYPES,
            version: "v2",
            settings: &self.manila,
        };
        let target = match self.session.target(caller, &svc).await? {
            Resolved::Found(t) => t,
            Resolved::Missing(_) => return Ok(None),
        };
        // Manila does not paginate share types.
        #[derive(Deserialize)]
        struct List {
            #[serde(default)]
            share_types: Vec<ManilaType>,
        }
        let list: List = self
            .session
            .send(
                &target.who,
                Method::GET,
                &format!("{}types", target.base),
                None,
                CONTEXT,
            )
            .await?
            .expect(&[200], CONTEXT)?
            .json(CONTEXT)?;
        // GET /types/default answers 404 when no default type is
        // configured: then no type is the default. Any other failure is
        // treated the same, as the list itself was read. (Manila marks the
        // default in the list itself only from microversion 2.46.)
        #[derive(Deserialize)]
        struct Default {
            share_type: ManilaType,
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
                .and_then(|d| d.share_type.id),
            _ => None,
        };
        Ok(Some(
            list.share_types
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
