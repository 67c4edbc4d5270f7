//! The container images of the add-ons: a new tag for an image of a
//! manifest, its place under the mirror `container_infra_prefix`
//! (driver-capi.md § 3.5), and the labels that name tags and the mirror,
//! checked before any of them reaches an image reference.

use openkeel_magnum_driver::{DriverError, Labels};

use crate::labels::CONTAINER_INFRA_PREFIX;

/// The longest image tag a registry accepts.
const MAX_TAG_LEN: usize = 128;
/// The longest image name (registry and path) a registry accepts.
const MAX_NAME_LEN: usize = 255;

/// What gives the new tag of an image from its path elements (the parts
/// of its name between `/`); None keeps its tag.
pub(crate) type TagFor<'a> = &'a dyn Fn(&[&str]) -> Option<String>;

/// `image` with the tag `tag_for` gives its path elements (None keeps
/// the tag; a new tag drops a digest, which named the old one), then
/// mirrored under `prefix` ("" for none):
///
/// - calico images become `<prefix>/calico/<component>`;
/// - cilium images `<prefix>/cilium-<component>`, except the agent image
///   `cilium`, which stays `<prefix>/cilium`;
/// - `livenessprobe` becomes `<prefix>/csi-livenessprobe`;
/// - every other image `<prefix>/<last path element>`.
pub(crate) fn rewrite(image: &str, prefix: &str, tag_for: TagFor<'_>) -> String {
    if image.is_empty() {
        return String::new();
    }
    let (mut name, mut digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    let mut tag = None;
    if let Some(i) = name.rfind(':')
        && name.rfind('/').is_none_or(|slash| i > slash)
    {
        tag = Some(name[i + 1..].to_string());
        name = &name[..i];
    }
    let path: Vec<&str> = name.split('/').collect();
    if let Some(new) = tag_for(&path)
        && !new.is_empty()
        && tag.as_deref() != Some(new.as_str())
    {
        tag = Some(new);
        digest = None;
    }
    let prefix = prefix.trim_end_matches('/');
    let mut out = if prefix.is_empty() {
        name.to_string()
    } else {
        let last = path.last().copied().unwrap_or_default();
        let parent = path.len().checked_sub(2).map(|i| path[i]);
        match parent {
            Some("calico") => format!("{prefix}/calico/{last}"),
            Some("cilium") if !last.starts_with("cilium") => format!("{prefix}/cilium-{last}"),
            _ if last == "livenessprobe" => format!("{prefix}/csi-livenessprobe"),
            _ => format!("{prefix}/{last}"),
        }
    };
    if let Some(tag) = tag {
        out.push(':');
        out.push_str(&tag);
    }
    if let Some(digest) = digest {
        out.push('@');
        out.push_str(digest);
    }
    out
}

/// The tag a label names, None when the label is absent or empty. A set
/// value must be an image tag (`[A-Za-z0-9_][A-Za-z0-9_.-]*`, at most 128
/// characters), else 400.
// Deviation: the Go driver put `cloud_provider_tag`, `cinder_csi_plugin_tag`
// and the `csi_*_tag` labels into image references unchecked.
pub(crate) fn tag_label<'a>(labels: &'a Labels, key: &str) -> Result<Option<&'a str>, DriverError> {
    match labels.get_str(key) {
        None | Some("") => Ok(None),
        Some(v) if is_tag(v) => Ok(Some(v)),
        Some(v) => Err(invalid_label(key, v, "an image tag")),
    }
}

/// The mirror of `container_infra_prefix`, without a trailing `/`; ""
/// when the label is absent or empty. A set value must be a registry
/// and path that an image name can start with
/// (`registry.example.com:5000/k8s`), else 400.
// Deviation: the Go driver used `container_infra_prefix` unchecked.
pub(crate) fn prefix_label(labels: &Labels) -> Result<&str, DriverError> {
    let raw = labels.str_or(CONTAINER_INFRA_PREFIX, "");
    if raw.is_empty() {
        return Ok("");
    }
    let prefix = raw.trim_end_matches('/');
    if is_prefix(prefix) {
        Ok(prefix)
    } else {
        Err(invalid_label(
            CONTAINER_INFRA_PREFIX,
            raw,
            "an image registry and path such as registry.example.com/k8s",
        ))
    }
}

/// `Label <key> has an invalid value "<v>": expected <what>.`, 400.
pub(crate) fn invalid_label(key: &str, value: &str, what: &str) -> DriverError {
    DriverError::invalid(format!(
        "Label {key} has an invalid value {value:?}: expected {what}."
    ))
}

/// Whether `s` is an image tag.
pub(crate) fn is_tag(s: &str) -> bool {
    let mut bytes = s.bytes();
    s.len() <= MAX_TAG_LEN
        && bytes
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Whether `s` (without a trailing `/`) can start an image name: a
/// registry host with an optional port, or a path component, then path
/// components.
fn is_prefix(s: &str) -> bool {
    let mut parts = s.split('/');
    let first = parts.next().unwrap_or_default();
    s.len() < MAX_NAME_LEN
        && (is_registry(first) || is_path_component(first))
        && parts.all(is_path_component)
}

/// A registry host (DNS labels separated by dots) with an optional port.
fn is_registry(s: &str) -> bool {
    let (host, port) = match s.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (s, None),
    };
    let dns_label = |l: &str| {
        !l.is_empty()
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    host.split('.').all(dns_label)
        && port
            .is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()))
}

/// A path component of an image name: lowercase letters and digits,
/// runs of them joined by `.`, `_`, `__` or dashes.
fn is_path_component(s: &str) -> bool {
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let bytes = s.as_bytes();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    if !alnum(first) || !alnum(last) {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        if alnum(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !alnum(bytes[i]) {
            i += 1;
        }
        let sep = &s[start..i];
        let dashes = sep.bytes().all(|b| b == b'-');
        if !(matches!(sep, "." | "_" | "__") || dashes) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calico(path: &[&str]) -> Option<String> {
        (path.len() >= 2 && path[path.len() - 2] == "calico").then(|| "v3.31.3".to_string())
    }

    fn keep(_: &[&str]) -> Option<String> {
        None
    }

    /// Go: TestRewriteImage.
    #[test]
    fn images_are_retagged_and_mirrored() {
        let always = |_: &[&str]| Some("v1.16.0".to_string());
        let cases: [(&str, &str, TagFor<'_>, &str); 8] = [
            (
                "docker.io/calico/node:v3.28.5",
                "",
                &calico,
                "docker.io/calico/node:v3.31.3",
            ),
            (
                "docker.io/calico/node:v3.28.5",
                "registry.example.com/k8s/",
                &calico,
                "registry.example.com/k8s/calico/node:v3.31.3",
            ),
            (
                "quay.io/cilium/operator-generic:v1.15.3@sha256:abc",
                "mirror",
                &keep,
                "mirror/cilium-operator-generic:v1.15.3@sha256:abc",
            ),
            (
                "quay.io/cilium/cilium:v1.15.3",
                "mirror",
                &keep,
                "mirror/cilium:v1.15.3",
            ),
            (
                "registry.k8s.io/sig-storage/livenessprobe:v2.17.0",
                "mirror",
                &keep,
                "mirror/csi-livenessprobe:v2.17.0",
            ),
            (
                "registry.k8s.io/provider-os/openstack-cloud-controller-manager:v1.36.0",
                "mirror",
                &keep,
                "mirror/openstack-cloud-controller-manager:v1.36.0",
            ),
            (
                "quay.io/cilium/cilium:v1.15.3@sha256:abc",
                "",
                &always,
                "quay.io/cilium/cilium:v1.16.0",
            ),
            ("localhost:5000/pause", "", &keep, "localhost:5000/pause"),
        ];
        for (image, prefix, tag_for, want) in cases {
            assert_eq!(rewrite(image, prefix, tag_for), want, "{image} {prefix:?}");
        }
        // The same tag keeps the digest that names it.
        let same = |_: &[&str]| Some("v1.15.3".to_string());
        assert_eq!(
            rewrite("quay.io/cilium/cilium:v1.15.3@sha256:abc", "", &same),
            "quay.io/cilium/cilium:v1.15.3@sha256:abc"
        );
        assert_eq!(rewrite("", "mirror", &always), "");
        assert_eq!(
            rewrite("busybox", "mirror", &always),
            "mirror/busybox:v1.16.0"
        );
    }

    #[test]
    fn tags_are_checked() {
        for good in ["v3.31.3", "v1.36.0-rc.1", "latest", "_x", "V1_2"] {
            assert!(is_tag(good), "{good}");
        }
        for bad in [
            "",
            ".v1",
            "-v1",
            "v1+build",
            "v1/x",
            "../calico/v3.99.0",
            "v1 ",
            "v1\n",
            "v1:2",
            &"a".repeat(129),
        ] {
            assert!(!is_tag(bad), "{bad:?}");
        }
        let labels = Labels::from([("t", "v1.2.3"), ("empty", ""), ("bad", "v1;rm")]);
        assert_eq!(tag_label(&labels, "t"), Ok(Some("v1.2.3")));
        assert_eq!(tag_label(&labels, "empty"), Ok(None));
        assert_eq!(tag_label(&labels, "absent"), Ok(None));
        assert_eq!(
            tag_label(&labels, "bad").unwrap_err(),
            DriverError::invalid(
                "Label bad has an invalid value \"v1;rm\": expected an image tag."
            )
        );
    }

    #[test]
    fn mirrors_are_checked() {
        for (raw, want) in [
            ("", ""),
            ("registry.example.com/k8s", "registry.example.com/k8s"),
            ("registry.example.com/k8s/", "registry.example.com/k8s"),
            ("registry.example.com:5000", "registry.example.com:5000"),
            (
                "Registry.Example.com:5000/a/b-c/d__e/f.g",
                "Registry.Example.com:5000/a/b-c/d__e/f.g",
            ),
            ("myorg", "myorg"),
            ("localhost:5000/mirror", "localhost:5000/mirror"),
        ] {
            let labels = Labels::from([(CONTAINER_INFRA_PREFIX, raw)]);
            assert_eq!(prefix_label(&labels), Ok(want), "{raw:?}");
        }
        for bad in [
            "/",
            "registry.example.com/K8s",
            "registry example.com",
            "registry.example.com/k8s:v1",
            "registry.example.com/k8s@sha256:x",
            "registry.example.com//k8s",
            "-registry.example.com",
            "registry.example.com:port",
            "registry.example.com/-k8s",
            "registry.example.com/k8s\n- x",
            "https://registry.example.com",
        ] {
            let labels = Labels::from([(CONTAINER_INFRA_PREFIX, bad)]);
            let err = prefix_label(&labels).unwrap_err();
            assert!(
                err.to_string().contains(CONTAINER_INFRA_PREFIX),
                "{bad:?}: {err}"
            );
        }
        assert_eq!(prefix_label(&Labels::new()), Ok(""));
    }
}
