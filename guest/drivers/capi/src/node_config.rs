//! The configuration files the nodes receive through class variables, as
//! the base64 the patches write into the bootstrap files: containerd's
//! configuration (`containerdConfig`) and the proxy settings of
//! containerd (`systemdProxyConfig`) and apt (`aptProxyConfig`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::registries::Registries;

/// The sandbox (pause) image of the pods, and its name under a mirror.
const PAUSE_IMAGE: &str = "registry.k8s.io/pause:3.9";
/// The pause image's path under `container_infra_prefix`.
const PAUSE_IMAGE_NAME: &str = "pause:3.9";

/// containerd's configuration (version 2): the drop-in directory
/// imported, the pause image (from the mirror `prefix` when one is given),
/// runc with the systemd cgroup driver, and the CRI plugin's registry
/// mirrors and insecure registries when there are any.
pub fn containerd_config(prefix: &str, registries: &Registries) -> String {
    let pause = if prefix.is_empty() {
        PAUSE_IMAGE.to_string()
    } else {
        format!("{}/{PAUSE_IMAGE_NAME}", prefix.trim_end_matches('/'))
    };
    let cri = "plugins.\"io.containerd.grpc.v1.cri\"";
    let runc = format!("{cri}.containerd.runtimes.runc");
    let config = format!(
        "version = 2\n\
         imports = [\"/etc/containerd/conf.d/*.toml\"]\n\
         \n\
         [plugins]\n  \
           [{cri}]\n    \
             sandbox_image = \"{pause}\"\n  \
           [{runc}]\n    \
             runtime_type = \"io.containerd.runc.v2\"\n  \
           [{runc}.options]\n    \
             SystemdCgroup = true\n{}",
        registries.cri_tables()
    );
    STANDARD.encode(config)
}

/// The systemd drop-in giving containerd the template's proxy, each
/// variable in lower and upper case; "" when the template has neither
/// `http_proxy` nor `https_proxy`.
pub fn systemd_proxy_config(http_proxy: &str, https_proxy: &str, no_proxy: &str) -> String {
    if http_proxy.is_empty() && https_proxy.is_empty() {
        return String::new();
    }
    let mut dropin = String::from("[Service]\n");
    for (name, value) in [
        ("http_proxy", http_proxy),
        ("https_proxy", https_proxy),
        ("no_proxy", no_proxy),
    ] {
        if value.is_empty() {
            continue;
        }
        for name in [name.to_string(), name.to_ascii_uppercase()] {
            dropin.push_str(&format!("Environment=\"{name}={value}\"\n"));
        }
    }
    STANDARD.encode(dropin)
}

/// apt's proxy configuration; "" when the template has neither
/// `http_proxy` nor `https_proxy`.
pub fn apt_proxy_config(http_proxy: &str, https_proxy: &str) -> String {
    if http_proxy.is_empty() && https_proxy.is_empty() {
        return String::new();
    }
    let mut config = String::new();
    for (scheme, value) in [("http", http_proxy), ("https", https_proxy)] {
        if !value.is_empty() {
            config.push_str(&format!("Acquire::{scheme}::Proxy \"{value}\";\n"));
        }
    }
    STANDARD.encode(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(b64: &str) -> String {
        String::from_utf8(STANDARD.decode(b64).expect("base64")).expect("utf-8")
    }

    #[test]
    fn containerd_pulls_the_pause_image_from_the_mirror() {
        let plain = decoded(&containerd_config("", &Registries::default()));
        assert!(plain.starts_with(
            "version = 2\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n\n[plugins]\n"
        ));
        assert!(plain.contains("    sandbox_image = \"registry.k8s.io/pause:3.9\"\n"));
        assert!(plain.ends_with(
            "  [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n    SystemdCgroup = true\n"
        ));
        for prefix in ["registry.example.com/k8s", "registry.example.com/k8s/"] {
            let mirrored = decoded(&containerd_config(prefix, &Registries::default()));
            assert!(
                mirrored.contains("sandbox_image = \"registry.example.com/k8s/pause:3.9\""),
                "{prefix}"
            );
        }
    }

    #[test]
    fn containerd_gets_the_registry_tables_after_runc() {
        let r = Registries::parse(
            "Label",
            "docker.io=https://mirror.example.com",
            "mirror.example.com",
        )
        .unwrap();
        let plain = decoded(&containerd_config("", &r));
        assert!(plain.ends_with(&format!("    SystemdCgroup = true\n{}", r.cri_tables())));
        assert!(plain.contains(
            "[plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.\"docker.io\"]\n    endpoint = [\"https://mirror.example.com\"]\n"
        ));
    }

    #[test]
    fn proxies_are_set_only_when_the_template_has_one() {
        assert_eq!(systemd_proxy_config("", "", "localhost"), "");
        assert_eq!(apt_proxy_config("", ""), "");
        assert_eq!(
            decoded(&systemd_proxy_config("", "https://p:3129", "")),
            "[Service]\nEnvironment=\"https_proxy=https://p:3129\"\nEnvironment=\"HTTPS_PROXY=https://p:3129\"\n"
        );
        assert_eq!(
            decoded(&apt_proxy_config("http://p:3128", "https://p:3129")),
            "Acquire::http::Proxy \"http://p:3128\";\nAcquire::https::Proxy \"https://p:3129\";\n"
        );
    }
}
