//! The version documents: `GET /` (root.py `Root.convert`) and `GET /v1`
//! (v1/__init__.py `V1.convert`), and Magnum's link builder.

use magnum_domain::microversion::Version;
use serde::Serialize;

/// Magnum's link object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Link {
    pub href: String,
    pub rel: &'static str,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub media_type: Option<&'static str>,
}

impl Link {
    /// A link the way `magnum/api/controllers/link.py` builds it:
    /// `<base>/v1/<resource>/<args>` or, for a bookmark,
    /// `<base>/<resource>/<args>`; args starting with `?` are appended
    /// without a slash.
    pub fn build(
        rel: &'static str,
        base: &str,
        resource: &str,
        args: &str,
        bookmark: bool,
    ) -> Link {
        let mut href = if bookmark {
            format!("{base}/{resource}")
        } else {
            format!("{base}/v1/{resource}")
        };
        if !args.starts_with('?') {
            href.push('/');
        }
        href.push_str(args);
        Link {
            href,
            rel,
            media_type: None,
        }
    }

    /// The `self` and `bookmark` pair of a resource.
    pub fn pair(base: &str, resource: &str, args: &str) -> [Link; 2] {
        [
            Link::build("self", base, resource, args, false),
            Link::build("bookmark", base, resource, args, true),
        ]
    }
}

/// The `next` URL of a full page (`collection.py` `get_next`):
/// `<base>/v1/<resource>?<k>=<v>&…limit=<n>&marker=<m>`, with the extra
/// arguments in the order given.
pub fn next_link(
    base: &str,
    resource: &str,
    args: &[(&str, &str)],
    limit: i64,
    marker: &str,
) -> String {
    let mut q = String::from("?");
    for (k, v) in args {
        q.push_str(k);
        q.push('=');
        q.push_str(v);
        q.push('&');
    }
    q.push_str(&format!("limit={limit}&marker={marker}"));
    Link::build("next", base, resource, &q, false).href
}

#[derive(Serialize)]
struct VersionDoc {
    id: &'static str,
    links: [Link; 1],
    max_version: String,
    min_version: String,
    status: &'static str,
}

/// The answer of `GET /`.
#[derive(Serialize)]
pub struct RootDocument {
    description: &'static str,
    name: &'static str,
    versions: [VersionDoc; 1],
}

/// The answer of `GET /` for the application URL `base`.
pub fn root_document(base: &str) -> RootDocument {
    RootDocument {
        description: "Magnum is an OpenStack project which aims to provide container cluster management.",
        name: "OpenStack Magnum API",
        versions: [VersionDoc {
            id: "v1",
            links: [Link::build("self", base, "v1", "", true)],
            max_version: Version::MAX.to_string(),
            min_version: Version::MIN.to_string(),
            status: "CURRENT",
        }],
    }
}

#[derive(Serialize)]
struct MediaType {
    base: &'static str,
    #[serde(rename = "type")]
    media_type: &'static str,
}

/// The answer of `GET /v1`.
#[derive(Serialize)]
pub struct V1Document {
    certificates: [Link; 2],
    clusters: [Link; 2],
    clustertemplates: [Link; 2],
    credentials: [Link; 2],
    federations: [Link; 2],
    id: &'static str,
    links: [Link; 2],
    media_types: [MediaType; 1],
    mservices: [Link; 2],
    nodegroups: [Link; 2],
    quotas: [Link; 2],
    stats: [Link; 2],
}

/// The answer of `GET /v1` for the application URL `base`.
pub fn v1_document(base: &str) -> V1Document {
    V1Document {
        certificates: Link::pair(base, "certificates", ""),
        clusters: Link::pair(base, "clusters", ""),
        clustertemplates: Link::pair(base, "clustertemplates", ""),
        credentials: Link::pair(base, "credentials", ""),
        federations: Link::pair(base, "federations", ""),
        id: "v1",
        links: [
            Link::build("self", base, "v1", "", true),
            Link {
                href: "http://docs.openstack.org/developer/magnum/dev/api-spec-v1.html".into(),
                rel: "describedby",
                media_type: Some("text/html"),
            },
        ],
        media_types: [MediaType {
            base: "application/json",
            media_type: "application/vnd.openstack.magnum.v1+json",
        }],
        mservices: Link::pair(base, "mservices", ""),
        nodegroups: [
            Link {
                href: format!("{base}/v1/clusters/{{cluster_id}}/nodegroups"),
                rel: "self",
                media_type: None,
            },
            Link {
                href: format!("{base}/clusters/{{cluster_id}}/nodegroups"),
                rel: "bookmark",
                media_type: None,
            },
        ],
        quotas: Link::pair(base, "quotas", ""),
        stats: Link::pair(base, "stats", ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_next() {
        assert_eq!(
            Link::build("self", "http://h", "clusters", "", false).href,
            "http://h/v1/clusters/"
        );
        assert_eq!(
            Link::build("bookmark", "http://h", "clusters", "x", true).href,
            "http://h/clusters/x"
        );
        assert_eq!(
            next_link(
                "https://api.example.com",
                "clusters",
                &[("sort_key", "id"), ("sort_dir", "asc")],
                3,
                "m1"
            ),
            "https://api.example.com/v1/clusters?sort_key=id&sort_dir=asc&limit=3&marker=m1"
        );
    }

    /// The documents are byte-for-byte as long as Magnum's (the recorded
    /// Content-Length of the reference: 287 and 1560 for http://localhost).
    #[test]
    fn document_lengths_match_the_reference() {
        assert_eq!(
            python_semantics::pyjson::to_vec(&root_document("http://localhost"))
                .unwrap()
                .len(),
            287
        );
        assert_eq!(
            python_semantics::pyjson::to_vec(&v1_document("http://localhost"))
                .unwrap()
                .len(),
            1560
        );
    }
}
