//! Nova flavors by id or name, and the caller's keypairs.

use magnum_domain::{MagnumError, RequestContext};
use serde::Deserialize;

use super::catalog::next_url;
use super::clients::{Api, Clients, Link, MAX_PAGES, is_path_safe, next_link, path_segment};
use super::error::{ErrorKind, LookupError, OpenStackError};
use super::{Flavor, Keypair};

/// A flavor as Nova answers it.
#[derive(Clone, Deserialize)]
pub(super) struct NovaFlavor {
    #[serde(default)]
    pub(super) id: String,
    #[serde(default)]
    pub(super) name: String,
    #[serde(default)]
    vcpus: i64,
    #[serde(default)]
    ram: i64,
    #[serde(default)]
    disk: i64,
}

impl From<NovaFlavor> for Flavor {
    fn from(f: NovaFlavor) -> Self {
        Flavor {
            id: f.id,
            name: f.name,
            vcpus: f.vcpus,
            ram: f.ram,
            disk: f.disk,
        }
    }
}

#[derive(Deserialize)]
struct FlavorShow {
    #[serde(default)]
    flavor: Option<NovaFlavor>,
}

#[derive(Deserialize)]
struct FlavorList {
    #[serde(default)]
    flavors: Vec<NovaFlavor>,
    #[serde(default)]
    flavors_links: Vec<Link>,
}

/// The flavor whose id or name is `ident` (Magnum's `validate_flavor` and
/// the root-disk check match `name == x or id == x`): the id first with a
/// direct GET; only a name costs a listing, because Nova's flavor list has
/// no name filter. The listing stops at the first match.
///
/// Errors: 400 `FlavorNotFound`, 403 `AuthorizationFailure` when no Nova
/// endpoint is available.
pub(crate) async fn flavor(
    clients: &Clients,
    ctx: &RequestContext,
    ident: &str,
) -> Result<Flavor, LookupError> {
    let c = clients.client(ctx, Api::Compute)?;
    if is_path_safe(ident) {
        const SHOW: &str = "nova: show flavor";
        let reply = c
            .get(&format!("{}flavors/{}", c.base, path_segment(ident)), SHOW)
            .await?;
        match reply.status {
            200 => {
                // Deviation: Magnum takes the first flavor in list order
                // whose name or id matches; here a flavor whose id is ident
                // wins over another named ident, and an admin can name a
                // private flavor by id (Nova lists only public flavors to
                // admins by default).
                if let Some(f) = reply.json::<FlavorShow>(SHOW)?.flavor
                    && f.id == ident
                {
                    return Ok(f.into());
                }
                // "detail" and the like name a collection, not a flavor.
            }
            400 | 404 => {}
            s => return Err(OpenStackError::new(SHOW, ErrorKind::Status(s)).into()),
        }
    }

    const LIST: &str = "nova: list flavors";
    let collection = format!("{}flavors/detail", c.base);
    let mut next = collection.clone();
    for _ in 0..MAX_PAGES {
        let page: FlavorList = c.get(&next, LIST).await?.expect(&[200], LIST)?.json(LIST)?;
        if let Some(f) = page
            .flavors
            .iter()
            .find(|f| f.name == ident || f.id == ident)
        {
            return Ok(f.clone().into());
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
    Err(MagnumError::flavor_not_found(ident).into())
}

#[derive(Deserialize)]
struct KeypairShow {
    #[serde(default)]
    keypair: Option<NovaKeypair>,
}

#[derive(Deserialize)]
struct NovaKeypair {
    #[serde(default)]
    name: String,
    #[serde(default, rename = "type")]
    key_type: Option<String>,
    #[serde(default)]
    fingerprint: Option<String>,
}

/// The caller's keypair named `name` (Magnum's `validate_keypair`).
///
/// Errors: 404 `KeyPairNotFound`, 403 `AuthorizationFailure` when no Nova
/// endpoint is available.
pub(crate) async fn keypair(
    clients: &Clients,
    ctx: &RequestContext,
    name: &str,
) -> Result<Keypair, LookupError> {
    let c = clients.client(ctx, Api::Compute)?;
    if !is_path_safe(name) {
        return Err(MagnumError::key_pair_not_found(name).into());
    }
    const SHOW: &str = "nova: show keypair";
    let reply = c
        .get(
            &format!("{}os-keypairs/{}", c.base, path_segment(name)),
            SHOW,
        )
        .await?;
    if reply.status == 404 {
        return Err(MagnumError::key_pair_not_found(name).into());
    }
    match reply
        .expect(&[200], SHOW)?
        .json::<KeypairShow>(SHOW)?
        .keypair
    {
        Some(k) if k.name == name => Ok(Keypair {
            name: k.name,
            key_type: k.key_type.unwrap_or_default(),
            fingerprint: k.fingerprint.unwrap_or_default(),
        }),
        _ => Err(MagnumError::key_pair_not_found(name).into()),
    }
}
