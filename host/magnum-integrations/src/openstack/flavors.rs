//! Nova flavors by id or name, and the caller's keypairs.

use std::future::Future;
use std::ops::ControlFlow;

use magnum_domain::{MagnumError, RequestContext};
use serde::Deserialize;

use super::clients::{Api, Clients, Link, Listing, MAX_PAGES, Walk, is_path_safe, path_segment};
use super::error::{ErrorKind, LookupError, OpenStackError};
use super::session::Reply;
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
/// the root-disk check match `name == x or id == x`), see [`find_flavor`].
///
/// Errors: 400 `FlavorNotFound`, 403 `AuthorizationFailure` when no Nova
/// endpoint is available.
pub(crate) async fn flavor(
    clients: &Clients,
    ctx: &RequestContext,
    ident: &str,
) -> Result<Flavor, LookupError> {
    let c = &clients.client(ctx, Api::Compute)?;
    find_flavor(&c.base, ident, |url, context| async move {
        c.get(&url, context).await
    })
    .await?
    .ok_or_else(|| MagnumError::flavor_not_found(ident).into())
}

/// The flavor whose id or name is `ident` as a caller sees it through
/// `get` (a GET of a URL under Nova's `base`, with the error context), or
/// `None`: the id first with a direct GET; only a name costs a listing,
/// because Nova's flavor list has no name filter. The listing stops at the
/// first match.
pub(super) async fn find_flavor<Fut>(
    base: &str,
    ident: &str,
    mut get: impl FnMut(String, &'static str) -> Fut,
) -> Result<Option<Flavor>, OpenStackError>
where
    Fut: Future<Output = Result<Reply, OpenStackError>>,
{
    if is_path_safe(ident) {
        const SHOW: &str = "nova: show flavor";
        let reply = get(format!("{base}flavors/{}", path_segment(ident)), SHOW).await?;
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
                    return Ok(Some(f.into()));
                }
                // "detail" and the like name a collection, not a flavor.
            }
            400 | 404 => {}
            s => return Err(OpenStackError::new(SHOW, ErrorKind::Status(s))),
        }
    }
    const LIST: &str = "nova: list flavors";
    let collection = format!("{base}flavors/detail");
    let listing = Listing {
        collection: &collection,
        first: collection.clone(),
        max_pages: MAX_PAGES,
        context: LIST,
    };
    let walk = listing
        .walk(
            |url| get(url, LIST),
            |page: FlavorList| Ok((page.flavors, page.flavors_links)),
            |flavors| match flavors
                .into_iter()
                .find(|f| f.name == ident || f.id == ident)
            {
                Some(f) => ControlFlow::Break(Flavor::from(f)),
                None => ControlFlow::Continue(()),
            },
        )
        .await?;
    Ok(match walk {
        Walk::Stopped(f) => Some(f),
        Walk::Done | Walk::Truncated => None,
    })
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
