//! The registry of loaded drivers and Magnum's selection rules: by the
//! template's stored driver name, else by (server_type, os, coe), with
//! `[drivers]/default_driver`, `enabled_beta_drivers` and
//! `disabled_drivers`.

use std::collections::BTreeMap;

use magnum_domain::MagnumError;

use crate::driver::Driver;
use crate::types::Target;

/// What the registry needs of an entry point.
pub trait Entry: Clone {
    fn name(&self) -> &str;
    fn beta(&self) -> bool;
    fn provides(&self) -> &[Target];
}

impl Entry for Driver {
    fn name(&self) -> &str {
        Driver::name(self)
    }
    fn beta(&self) -> bool {
        Driver::beta(self)
    }
    fn provides(&self) -> &[Target] {
        Driver::provides(self)
    }
}

/// The `[drivers]` options that choose among the loaded drivers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// `disabled_drivers`: not chosen by tuple, as the default, nor listed.
    pub disabled: Vec<String>,
    /// `enabled_beta_drivers`: beta drivers that may be chosen by tuple.
    pub enabled_beta: Vec<String>,
    /// `default_driver`.
    pub default: Option<String>,
}

/// The set of loaded entry points seen through one [`Selection`].
/// Immutable and safe to share.
#[derive(Clone)]
pub struct Registry<D: Entry = Driver> {
    all: BTreeMap<String, D>,
    sel: Selection,
}

/// What Magnum's API knows when a cluster template is created
/// (`enforce_driver_supported`, magnum/api/validation.py:66).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TemplateDriverInput {
    /// The template's server_type and coe; the distro already resolved by
    /// the caller (the body's cluster_distro, else the image's os_distro).
    pub server_type: String,
    pub cluster_distro: String,
    pub coe: String,
    /// The driver named in the request body ("" if none).
    pub request_driver: String,
    /// The image property magnum_driver ("" if none).
    pub image_driver: String,
}

impl<D: Entry> Registry<D> {
    /// A registry of the given entry points. A duplicate or empty name is
    /// refused.
    pub fn new(sel: Selection, drivers: impl IntoIterator<Item = D>) -> Result<Self, String> {
        let mut all = BTreeMap::new();
        for d in drivers {
            let name = d.name().to_string();
            if name.is_empty() {
                return Err("a driver has an empty name".to_string());
            }
            if all.insert(name.clone(), d).is_some() {
                return Err(format!("driver {name:?} is installed twice"));
            }
        }
        Ok(Registry { all, sel })
    }

    /// The options the registry applies.
    pub fn selection(&self) -> &Selection {
        &self.sel
    }

    /// Every loaded entry point, disabled ones included, sorted by name.
    pub fn all(&self) -> impl Iterator<Item = &D> {
        self.all.values()
    }

    /// Whether `name` is listed in `disabled_drivers`.
    pub fn is_disabled(&self, name: &str) -> bool {
        self.sel.disabled.iter().any(|d| d == name)
    }

    /// Whether a beta `name` is listed in `enabled_beta_drivers`.
    pub fn is_beta_enabled(&self, name: &str) -> bool {
        self.sel.enabled_beta.iter().any(|d| d == name)
    }

    /// The names of the enabled (loaded and not disabled) drivers, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.all
            .keys()
            .filter(|n| !self.is_disabled(n))
            .map(String::as_str)
            .collect()
    }

    /// The enabled drivers, sorted by name.
    pub fn enabled(&self) -> impl Iterator<Item = &D> {
        self.all.values().filter(|d| !self.is_disabled(d.name()))
    }

    /// Loads a driver by name, as Magnum loads the template's stored
    /// driver; an unknown name is 400 ClusterDriverNotSupported.
    ///
    /// Magnum: magnum/drivers/common/driver.py:128 loads a named driver
    /// with stevedore's DriverManager, which does not consult
    /// `disabled_drivers`, so a disabled driver named by a template is
    /// still loaded; beta drivers are not checked here either.
    pub fn lookup(&self, name: &str) -> Result<&D, MagnumError> {
        match self.all.get(name) {
            Some(d) if !name.is_empty() => Ok(d),
            _ => Err(MagnumError::cluster_driver_not_supported(name)),
        }
    }

    /// Every tuple an enabled driver provides, sorted, without duplicates.
    pub fn targets(&self) -> Vec<Target> {
        let mut out: Vec<Target> = self
            .enabled()
            .flat_map(|d| d.provides().iter().cloned())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Whether a driver may be chosen without being named: not a beta
    /// driver left out of `enabled_beta_drivers`.
    fn usable(&self, d: &D) -> bool {
        !d.beta() || self.is_beta_enabled(d.name())
    }

    /// The enabled driver providing (server_type, os, coe), as Magnum's
    /// get_driver without a name: 400 ClusterTypeNotSupported when none
    /// does, 400 ClusterTypeBetaNotEnabled when only beta drivers that are
    /// not enabled do.
    ///
    /// When several enabled drivers provide the tuple, Magnum keeps the one
    /// whose entry point it loaded last, an order that depends on the
    /// Python installation; here the alphabetically first name among those
    /// that may be used wins (a beta driver that is not enabled, such as
    /// the built-in fake driver, never hides another).
    pub fn for_target(&self, server_type: &str, os: &str, coe: &str) -> Result<&D, MagnumError> {
        let t = Target::new(server_type, os, coe);
        let mut providers = self.enabled().filter(|d| d.provides().contains(&t));
        let Some(first) = providers.next() else {
            let supported: Vec<String> = self.targets().iter().map(Target::to_string).collect();
            let supported: Vec<&str> = supported.iter().map(String::as_str).collect();
            return Err(MagnumError::cluster_type_not_supported(
                server_type,
                os,
                coe,
                &supported,
            ));
        };
        std::iter::once(first)
            .chain(providers)
            .find(|d| self.usable(d))
            .ok_or_else(|| {
                MagnumError::cluster_type_beta_not_enabled(server_type, os, coe, first.name())
            })
    }

    /// Magnum's `Driver.get_driver(server_type, os, coe, driver_name)`:
    /// by name when the template stores one, else by tuple. The conductor
    /// finds a cluster's driver with it.
    pub fn get(
        &self,
        server_type: &str,
        os: &str,
        coe: &str,
        name: Option<&str>,
    ) -> Result<&D, MagnumError> {
        match name {
            Some(n) if !n.is_empty() => self.lookup(n),
            _ => self.for_target(server_type, os, coe),
        }
    }

    /// Magnum's get_default_driver: `default_driver` when set (it must name
    /// an enabled driver, else 400 ClusterDriverNotSupported), else the
    /// alphabetically first enabled driver that may be used (Magnum does
    /// not skip beta drivers here: with the built-in fake driver loaded in
    /// every process, it would be every template's), else `None`.
    pub fn default_name(&self) -> Result<Option<&str>, MagnumError> {
        let names = self.names();
        if let Some(def) = self.sel.default.as_deref().filter(|d| !d.is_empty()) {
            return match names.iter().find(|n| **n == def) {
                Some(n) => Ok(Some(n)),
                None => Err(MagnumError::cluster_driver_not_supported(def)),
            };
        }
        Ok(self.enabled().find(|d| self.usable(d)).map(|d| d.name()))
    }

    /// The driver a new cluster template stores: the request's, else the
    /// image's `magnum_driver`, else `default_driver`, else the first
    /// enabled driver; the name must be loaded (400
    /// ClusterDriverNotSupported), and is not checked against the tuple or
    /// the beta list. With no driver at all, the tuple is checked instead.
    /// Returns the name Magnum writes into the template.
    pub fn resolve_template_driver(
        &self,
        input: &TemplateDriverInput,
    ) -> Result<String, MagnumError> {
        let mut name = input.request_driver.clone();
        if name.is_empty() {
            name = input.image_driver.clone();
        }
        if name.is_empty() {
            name = self.default_name()?.unwrap_or_default().to_string();
        }
        let d = self.get(
            &input.server_type,
            &input.cluster_distro,
            &input.coe,
            Some(&name),
        )?;
        Ok(d.name().to_string())
    }

    /// Magnum's check before a cluster is created
    /// (magnum/api/validation.py:51, enforce_cluster_type_supported): some
    /// enabled driver provides the template's tuple, whatever driver the
    /// template stores; beta drivers must be enabled.
    pub fn check_cluster_type(
        &self,
        server_type: &str,
        cluster_distro: &str,
        coe: &str,
    ) -> Result<(), MagnumError> {
        self.for_target(server_type, cluster_distro, coe)
            .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    //! Go: internal/driver/registry_test.go, case for case.

    use super::*;

    #[derive(Clone, Debug)]
    struct Stub {
        name: &'static str,
        beta: bool,
        provides: Vec<Target>,
    }

    impl Entry for Stub {
        fn name(&self) -> &str {
            self.name
        }
        fn beta(&self) -> bool {
            self.beta
        }
        fn provides(&self) -> &[Target] {
            &self.provides
        }
    }

    fn vm(os: &str) -> Target {
        Target::new("vm", os, "kubernetes")
    }

    /// A driver `name` providing `os` on VMs.
    fn stub(name: &'static str, beta: bool, os: &[&str]) -> Stub {
        Stub {
            name,
            beta,
            provides: os.iter().map(|os| vm(os)).collect(),
        }
    }

    fn capi_ubuntu() -> Stub {
        stub("k8s_cluster_api_ubuntu", false, &["ubuntu"])
    }
    fn capi_flat() -> Stub {
        stub("k8s_cluster_api_flatcar", false, &["flatcar"])
    }
    fn helm() -> Stub {
        stub("k8s_capi_helm_v1", false, &["ubuntu", "flatcar"])
    }
    fn beta_drv() -> Stub {
        stub("k8s_beta", true, &["rockylinux"])
    }
    fn rocky() -> Stub {
        stub("k8s_rocky", false, &["rockylinux"])
    }

    fn sel(disabled: &[&str], beta: &[&str], default: Option<&str>) -> Selection {
        Selection {
            disabled: disabled.iter().map(|s| s.to_string()).collect(),
            enabled_beta: beta.iter().map(|s| s.to_string()).collect(),
            default: default.map(str::to_string),
        }
    }

    fn reg(s: Selection, drivers: Vec<Stub>) -> Registry<Stub> {
        Registry::new(s, drivers).unwrap_or_else(|e| panic!("{e}"))
    }

    fn want_err<T: std::fmt::Debug>(r: Result<T, MagnumError>, status: u16, msg: &str) {
        match r {
            Err(e) => {
                assert_eq!(e.status, status, "{e:?}");
                assert_eq!(e.message, msg);
            }
            Ok(v) => panic!("got {v:?}, want the error {msg:?}"),
        }
    }

    #[test]
    fn registry_names() {
        // Go: TestRegistryNames.
        let r = reg(
            sel(&["k8s_capi_helm_v1"], &[], None),
            vec![capi_ubuntu(), helm(), capi_flat(), beta_drv()],
        );
        assert_eq!(
            r.names(),
            vec![
                "k8s_beta",
                "k8s_cluster_api_flatcar",
                "k8s_cluster_api_ubuntu"
            ]
        );
        // Lookup finds a disabled driver by name, as stevedore does.
        assert_eq!(
            r.lookup("k8s_capi_helm_v1").map(|d| d.name),
            Ok("k8s_capi_helm_v1")
        );
        let e = r.lookup("nope").unwrap_err();
        assert_eq!(e.kind, "ClusterDriverNotSupported");
        want_err(
            r.lookup("nope"),
            400,
            "Cluster driver (nope) not supported.",
        );
        want_err(r.lookup(""), 400, "Cluster driver () not supported.");
    }

    #[test]
    fn a_duplicate_name_is_refused() {
        // Go: TestRegistryPanicsOnDuplicate (a refusal here: path drivers
        // may collide).
        assert!(Registry::new(Selection::default(), vec![capi_ubuntu(), capi_ubuntu()]).is_err());
    }

    #[test]
    fn for_target() {
        // Go: TestForTarget.
        struct Case {
            name: &'static str,
            sel: Selection,
            drivers: Vec<Stub>,
            target: Target,
            want: Option<&'static str>,
            msg: &'static str,
        }
        let none = Selection::default();
        let cases = vec![
            Case {
                name: "provided tuple",
                sel: none.clone(),
                drivers: vec![capi_ubuntu(), capi_flat()],
                target: vm("flatcar"),
                want: Some("k8s_cluster_api_flatcar"),
                msg: "",
            },
            Case {
                name: "two drivers provide the tuple: the alphabetically first wins",
                sel: none.clone(),
                drivers: vec![capi_ubuntu(), helm()],
                target: vm("ubuntu"),
                want: Some("k8s_capi_helm_v1"),
                msg: "",
            },
            Case {
                name: "disabled driver does not provide",
                sel: sel(&["k8s_capi_helm_v1"], &[], None),
                drivers: vec![capi_ubuntu(), helm()],
                target: vm("ubuntu"),
                want: Some("k8s_cluster_api_ubuntu"),
                msg: "",
            },
            Case {
                name: "unknown tuple lists the sorted supported tuples",
                sel: none.clone(),
                drivers: vec![capi_ubuntu(), helm(), capi_flat()],
                target: vm("debian"),
                want: None,
                msg: "Cluster type (vm, debian, kubernetes) is not supported by any loaded cluster driver. Loaded drivers support: (vm, flatcar, kubernetes), (vm, ubuntu, kubernetes).",
            },
            Case {
                name: "disabled drivers' tuples are not listed",
                sel: sel(&["k8s_capi_helm_v1", "k8s_cluster_api_flatcar"], &[], None),
                drivers: vec![capi_ubuntu(), helm(), capi_flat()],
                target: vm("flatcar"),
                want: None,
                msg: "Cluster type (vm, flatcar, kubernetes) is not supported by any loaded cluster driver. Loaded drivers support: (vm, ubuntu, kubernetes).",
            },
            Case {
                name: "no driver loaded",
                sel: none.clone(),
                drivers: vec![],
                target: vm("ubuntu"),
                want: None,
                msg: "Cluster type (vm, ubuntu, kubernetes) is not supported by any loaded cluster driver. Loaded drivers support: none (no cluster drivers are loaded).",
            },
            Case {
                name: "every driver disabled",
                sel: sel(&["k8s_cluster_api_ubuntu"], &[], None),
                drivers: vec![capi_ubuntu()],
                target: vm("ubuntu"),
                want: None,
                msg: "Cluster type (vm, ubuntu, kubernetes) is not supported by any loaded cluster driver. Loaded drivers support: none (no cluster drivers are loaded).",
            },
            Case {
                name: "beta driver not enabled",
                sel: none.clone(),
                drivers: vec![beta_drv()],
                target: vm("rockylinux"),
                want: None,
                msg: "Cluster type (vm, rockylinux, kubernetes) is provided by the 'k8s_beta' driver, which is a beta driver and is not enabled. Add 'k8s_beta' to the [drivers]/enabled_beta_drivers configuration option to use it.",
            },
            Case {
                name: "beta driver enabled",
                sel: sel(&[], &["k8s_beta"], None),
                drivers: vec![beta_drv()],
                target: vm("rockylinux"),
                want: Some("k8s_beta"),
                msg: "",
            },
            Case {
                // k8s_beta comes first alphabetically, but may not be used.
                name: "a beta driver not enabled does not hide another",
                sel: none.clone(),
                drivers: vec![beta_drv(), rocky()],
                target: vm("rockylinux"),
                want: Some("k8s_rocky"),
                msg: "",
            },
            Case {
                name: "an enabled beta driver first alphabetically wins",
                sel: sel(&[], &["k8s_beta"], None),
                drivers: vec![beta_drv(), rocky()],
                target: vm("rockylinux"),
                want: Some("k8s_beta"),
                msg: "",
            },
        ];
        for c in cases {
            let r = reg(c.sel, c.drivers);
            let got = r.for_target(&c.target.server_type, &c.target.os, &c.target.coe);
            match c.want {
                Some(want) => {
                    assert_eq!(got.map(|d| d.name), Ok(want), "{}", c.name);
                    assert_eq!(
                        r.check_cluster_type(&c.target.server_type, &c.target.os, &c.target.coe),
                        Ok(()),
                        "{}",
                        c.name
                    );
                }
                None => want_err(got, 400, c.msg),
            }
        }
    }

    #[test]
    fn resolve_template_driver() {
        // Go: TestResolveTemplateDriver.
        struct Case {
            name: &'static str,
            sel: Selection,
            drivers: Option<Vec<Stub>>,
            input: TemplateDriverInput,
            want: &'static str,
            msg: &'static str,
        }
        let all = vec![capi_ubuntu(), capi_flat(), helm(), beta_drv()];
        let inp = |req: &str, img: &str| TemplateDriverInput {
            request_driver: req.into(),
            image_driver: img.into(),
            ..Default::default()
        };
        let tuple = TemplateDriverInput {
            server_type: "vm".into(),
            cluster_distro: "ubuntu".into(),
            coe: "kubernetes".into(),
            ..Default::default()
        };
        let not_supported = "Cluster type (vm, ubuntu, kubernetes) is not supported by any loaded cluster driver. Loaded drivers support: none (no cluster drivers are loaded).";
        let cases = vec![
            Case {
                name: "request driver wins over image and default",
                sel: sel(&[], &[], Some("k8s_capi_helm_v1")),
                drivers: None,
                input: inp("k8s_cluster_api_flatcar", "k8s_cluster_api_ubuntu"),
                want: "k8s_cluster_api_flatcar",
                msg: "",
            },
            Case {
                name: "request driver not installed",
                sel: Selection::default(),
                drivers: None,
                input: inp("heat_k8s", "k8s_cluster_api_ubuntu"),
                want: "",
                msg: "Cluster driver (heat_k8s) not supported.",
            },
            Case {
                name: "request driver is not checked against the tuple",
                sel: Selection::default(),
                drivers: None,
                input: TemplateDriverInput {
                    request_driver: "k8s_cluster_api_flatcar".into(),
                    cluster_distro: "ubuntu".into(),
                    ..Default::default()
                },
                want: "k8s_cluster_api_flatcar",
                msg: "",
            },
            Case {
                name: "request driver that is beta and not enabled is accepted",
                sel: Selection::default(),
                drivers: None,
                input: inp("k8s_beta", ""),
                want: "k8s_beta",
                msg: "",
            },
            Case {
                name: "request driver that is disabled is still loaded",
                sel: sel(&["k8s_cluster_api_flatcar"], &[], None),
                drivers: None,
                input: inp("k8s_cluster_api_flatcar", ""),
                want: "k8s_cluster_api_flatcar",
                msg: "",
            },
            Case {
                name: "image magnum_driver when the request has none",
                sel: sel(&[], &[], Some("k8s_capi_helm_v1")),
                drivers: None,
                input: inp("", "k8s_cluster_api_ubuntu"),
                want: "k8s_cluster_api_ubuntu",
                msg: "",
            },
            Case {
                name: "image magnum_driver not installed",
                sel: Selection::default(),
                drivers: None,
                input: inp("", "magnum_old"),
                want: "",
                msg: "Cluster driver (magnum_old) not supported.",
            },
            Case {
                name: "configured default driver",
                sel: sel(&[], &[], Some("k8s_cluster_api_ubuntu")),
                drivers: None,
                input: inp("", ""),
                want: "k8s_cluster_api_ubuntu",
                msg: "",
            },
            Case {
                name: "configured default driver not installed",
                sel: sel(&[], &[], Some("k8s_missing")),
                drivers: None,
                input: inp("", ""),
                want: "",
                msg: "Cluster driver (k8s_missing) not supported.",
            },
            Case {
                name: "configured default driver disabled",
                sel: sel(
                    &["k8s_cluster_api_ubuntu"],
                    &[],
                    Some("k8s_cluster_api_ubuntu"),
                ),
                drivers: None,
                input: inp("", ""),
                want: "",
                msg: "Cluster driver (k8s_cluster_api_ubuntu) not supported.",
            },
            Case {
                name: "configured default driver that is beta and not enabled is accepted",
                sel: sel(&[], &[], Some("k8s_beta")),
                drivers: None,
                input: inp("", ""),
                want: "k8s_beta",
                msg: "",
            },
            Case {
                // Magnum would take k8s_beta; a beta driver that is not
                // enabled is skipped here (docs/compatibility.md).
                name: "alphabetically first installed driver that may be used",
                sel: Selection::default(),
                drivers: None,
                input: inp("", ""),
                want: "k8s_capi_helm_v1",
                msg: "",
            },
            Case {
                name: "alphabetically first installed driver, an enabled beta one",
                sel: sel(&[], &["k8s_beta"], None),
                drivers: None,
                input: inp("", ""),
                want: "k8s_beta",
                msg: "",
            },
            Case {
                name: "alphabetically first skips disabled drivers",
                sel: sel(&["k8s_beta", "k8s_capi_helm_v1"], &[], None),
                drivers: None,
                input: inp("", ""),
                want: "k8s_cluster_api_flatcar",
                msg: "",
            },
            Case {
                name: "no driver installed",
                sel: Selection::default(),
                drivers: Some(vec![]),
                input: tuple.clone(),
                want: "",
                msg: not_supported,
            },
            Case {
                name: "every driver disabled",
                sel: sel(
                    &[
                        "k8s_beta",
                        "k8s_capi_helm_v1",
                        "k8s_cluster_api_flatcar",
                        "k8s_cluster_api_ubuntu",
                    ],
                    &[],
                    None,
                ),
                drivers: None,
                input: tuple.clone(),
                want: "",
                msg: not_supported,
            },
            Case {
                name: "configured default driver set while no driver is installed",
                sel: sel(&[], &[], Some("k8s_cluster_api_ubuntu")),
                drivers: Some(vec![]),
                input: inp("", ""),
                want: "",
                msg: "Cluster driver (k8s_cluster_api_ubuntu) not supported.",
            },
        ];
        for c in cases {
            let r = reg(c.sel, c.drivers.unwrap_or_else(|| all.clone()));
            let got = r.resolve_template_driver(&c.input);
            if c.msg.is_empty() {
                assert_eq!(got.as_deref(), Ok(c.want), "{}", c.name);
            } else {
                want_err(got, 400, c.msg);
            }
        }
    }

    #[test]
    fn get() {
        // Go: TestGet.
        let r = reg(Selection::default(), vec![capi_ubuntu(), helm()]);
        assert_eq!(
            r.get(
                "vm",
                "flatcar",
                "kubernetes",
                Some("k8s_cluster_api_ubuntu")
            )
            .map(|d| d.name),
            Ok("k8s_cluster_api_ubuntu")
        );
        assert_eq!(
            r.get("vm", "flatcar", "kubernetes", None).map(|d| d.name),
            Ok("k8s_capi_helm_v1")
        );
        assert_eq!(
            r.get("vm", "flatcar", "kubernetes", Some(""))
                .map(|d| d.name),
            Ok("k8s_capi_helm_v1")
        );
    }

    #[test]
    fn enabled_drivers_and_their_targets() {
        // Go: TestList (the rows themselves are built by report.rs).
        let r = reg(
            sel(&["k8s_beta"], &[], None),
            vec![capi_ubuntu(), helm(), beta_drv()],
        );
        let names: Vec<&str> = r.enabled().map(|d| d.name).collect();
        assert_eq!(names, vec!["k8s_capi_helm_v1", "k8s_cluster_api_ubuntu"]);
        assert_eq!(r.targets(), vec![vm("flatcar"), vm("ubuntu")]);
        assert_eq!(r.all().count(), 3);
    }
}
