//! Glance images by id or name, as openstacksdk's
//! `find_image(ident, ignore_missing=False)` finds them for Magnum.

use std::collections::BTreeMap;

use magnum_domain::{MagnumError, RequestContext};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::Image;
use super::catalog::next_url;
use super::clients::{Api, Clients, MAX_PAGES, encode_query, is_uuid_like, path_segment};
use super::error::{ErrorKind, LookupError, OpenStackError};

/// A Glance v2 image, whose custom properties are top-level keys.
type GlanceImage = Map<String, Value>;

fn text(g: &GlanceImage, key: &str) -> Option<String> {
    match g.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn to_image(g: &GlanceImage) -> Image {
    let non_empty = |k: &str| text(g, k).filter(|s| !s.is_empty());
    Image {
        id: text(g, "id").unwrap_or_default(),
        name: text(g, "name").unwrap_or_default(),
        os_distro: non_empty("os_distro"),
        magnum_driver: non_empty("magnum_driver"),
        properties: g
            .iter()
            .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
            .collect::<BTreeMap<_, _>>(),
    }
}

#[derive(Deserialize)]
struct ImageList {
    #[serde(default)]
    images: Vec<GlanceImage>,
    #[serde(default)]
    next: Option<String>,
}

/// The image whose id or name is `ident`: a direct GET, then a name-filtered
/// list matched on id or name. Glance image ids are UUIDs, so the direct GET,
/// which could only answer 404, is skipped for anything else.
///
/// Errors: 400 `ImageNotFound`, 409 when several images match, 403
/// `ImageNotAuthorized` when Glance refuses the list, 403
/// `AuthorizationFailure` when no Glance endpoint is available.
pub(crate) async fn image(
    clients: &Clients,
    ctx: &RequestContext,
    ident: &str,
) -> Result<Image, LookupError> {
    let c = clients.client(ctx, Api::Image)?;
    if is_uuid_like(ident) {
        const SHOW: &str = "glance: show image";
        let reply = c
            .get(&format!("{}images/{}", c.base, path_segment(ident)), SHOW)
            .await?;
        match reply.status {
            200 => {
                let g: GlanceImage = reply.json(SHOW)?;
                if text(&g, "id").is_some_and(|id| !id.is_empty()) {
                    // openstacksdk returns what the GET found without
                    // comparing ids.
                    return Ok(to_image(&g));
                }
                // Not an image body; go on by name.
            }
            // openstacksdk's Resource.find falls back to the list on these.
            400 | 403 | 404 => {}
            s => return Err(OpenStackError::new(SHOW, ErrorKind::Status(s)).into()),
        }
    }

    const LIST: &str = "glance: list images";
    let collection = format!("{}images", c.base);
    let mut next = format!("{collection}?{}", encode_query(&[("name", ident)]));
    let mut found: Vec<Image> = Vec::new();
    for _ in 0..MAX_PAGES {
        let reply = c.get(&next, LIST).await?;
        match reply.status {
            200 => {}
            404 => return Err(MagnumError::image_not_found(ident).into()),
            403 => return Err(MagnumError::image_not_authorized(ident).into()),
            s => return Err(OpenStackError::new(LIST, ErrorKind::Status(s)).into()),
        }
        let page: ImageList = reply.json(LIST)?;
        found.extend(
            page.images
                .iter()
                .filter(|g| {
                    text(g, "id").as_deref() == Some(ident)
                        || text(g, "name").as_deref() == Some(ident)
                })
                .map(to_image),
        );
        if found.len() > 1 {
            return Err(MagnumError::multiple_openstack_resources("images", ident, "image").into());
        }
        let Some(link) = page.next.filter(|n| !n.is_empty()) else {
            break;
        };
        if page.images.is_empty() {
            break;
        }
        next = next_url(&collection, &link)
            .map_err(|e| OpenStackError::new(LIST, ErrorKind::Decode(e)))?;
    }
    found
        .pop()
        .ok_or_else(|| MagnumError::image_not_found(ident).into())
}
