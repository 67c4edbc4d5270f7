//! Options declared once: a service writes each option as one field of a
//! group struct, and [`group!`](crate::group) derives from that line the
//! option's registration ([`Opt`]) and its typed read. [`groups!`](crate::groups)
//! joins the group structs into the service's configuration type.
//!
//! ```
//! use std::sync::Arc;
//! use oslo_config::{ini, Config, Group, Opt, OptType, Reader, Schema};
//!
//! oslo_config::group! {
//!     /// `[api]`.
//!     pub struct Api {
//!         /// The listen port.
//!         pub port: u16 = Opt::of(OptType::Port).default("9511").help("The port."),
//!         /// The certificate, if any.
//!         pub ssl_cert_file: Option<String> = Opt::of(OptType::string()),
//!     }
//! }
//!
//! let mut schema = Schema::new();
//! for opt in Api::opts("api") {
//!     schema.register(opt)?;
//! }
//! let file = ini::parse("magnum.conf", b"[api]\nport = 8080\n")?;
//! let (config, _) = Config::from_files(Arc::new(schema), vec![file])
//!     .map_err(|errors| errors[0].clone())?;
//! let api = Api::read(&Reader::new(&config), "api");
//! assert_eq!((api.port, api.ssl_cert_file), (8080, None));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::cell::RefCell;

use crate::config::Config;
use crate::schema::{Key, Opt};
use crate::secret::Secret;
use crate::types::Value;

/// A group of options declared by [`group!`](crate::group): its options,
/// registered under a group name, and its typed read. A struct used for
/// several groups (one per client service, say) is declared once and
/// registered under each name.
pub trait Group: Sized {
    /// The options of the group, named `group`, in declaration order.
    fn opts(group: &str) -> Vec<Opt>;
    /// The group's values in a loaded configuration.
    fn read(reader: &Reader<'_>, group: &str) -> Self;
}

/// A field type that an option's value reads into. An option without a
/// value (no default, or set empty) reads as `None`, an empty string or
/// list, zero or `false`.
pub trait ReadValue: Sized {
    /// The value of `[group]/name`.
    fn read_value(reader: &Reader<'_>, group: &str, name: &str) -> Self;
}

/// An option that is accepted (and listed, and readable through
/// [`Config::lookup`]) but has no effect and no typed value. Its
/// registration marks it [unchecked](Opt::unchecked), so that a value of
/// any shape loads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Accepted;

/// Reads typed values from a loaded configuration, recording what it reads
/// and every value that does not have its field's type, so that a test can
/// check each declared option is read exactly once, with its type.
pub struct Reader<'a> {
    config: &'a Config,
    read: RefCell<Vec<Key>>,
    mismatches: RefCell<Vec<String>>,
}

impl<'a> Reader<'a> {
    /// A reader of `config`.
    pub fn new(config: &'a Config) -> Self {
        Reader {
            config,
            read: RefCell::new(Vec::new()),
            mismatches: RefCell::new(Vec::new()),
        }
    }

    /// The value of a declared option. A checked option always has a valid
    /// value in a loaded configuration; anything else is a mistake in the
    /// declarations, recorded, and reads as none.
    fn value(&self, group: &str, name: &str) -> &'a Value {
        self.read.borrow_mut().push(Key::new(group, name));
        match self.config.get(group, name) {
            Some(Ok(v)) => v,
            Some(Err(e)) => {
                self.mismatch(format!("{e}"));
                &Value::None
            }
            None => {
                self.mismatch(format!("[{group}]/{name} is not registered"));
                &Value::None
            }
        }
    }

    fn mismatch(&self, what: String) {
        self.mismatches.borrow_mut().push(what);
    }

    /// The value of `[group]/name` converted by `get`, `None` when it has
    /// no value; a value `get` refuses is recorded as not being `kind`.
    pub fn typed<T>(
        &self,
        group: &str,
        name: &str,
        kind: &str,
        get: impl Fn(&'a Value) -> Option<T>,
    ) -> Option<T> {
        let v = self.value(group, name);
        if *v == Value::None {
            return None;
        }
        let got = get(v);
        if got.is_none() {
            self.mismatch(format!("[{group}]/{name} is not {kind}: {v:?}"));
        }
        got
    }

    /// The keys read, in order (a key read twice is listed twice).
    pub fn keys_read(&self) -> Vec<Key> {
        self.read.borrow().clone()
    }

    /// The values that did not have their field's type, and the fields read
    /// that have no registered option.
    pub fn mismatches(&self) -> Vec<String> {
        self.mismatches.borrow().clone()
    }
}

impl ReadValue for Option<String> {
    fn read_value(r: &Reader<'_>, g: &str, n: &str) -> Self {
        r.typed(g, n, "a string", |v| v.as_str().map(str::to_owned))
    }
}

impl ReadValue for String {
    fn read_value(r: &Reader<'_>, g: &str, n: &str) -> Self {
        Option::<String>::read_value(r, g, n).unwrap_or_default()
    }
}

impl ReadValue for Option<Secret> {
    fn read_value(r: &Reader<'_>, g: &str, n: &str) -> Self {
        Option::<String>::read_value(r, g, n).map(Secret::new)
    }
}

impl ReadValue for Secret {
    fn read_value(r: &Reader<'_>, g: &str, n: &str) -> Self {
        Option::<Secret>::read_value(r, g, n).unwrap_or_default()
    }
}

impl ReadValue for Option<i64> {
    fn read_value(r: &Reader<'_>, g: &str, n: &str) -> Self {
        r.typed(g, n, "an integer", Value::as_int)
    }
}

impl ReadValue for i64 {
    fn read_value(r: &Reader<'_>, g: &str, n: &str) -> Self {
        Option::<i64>::read_value(r, g, n).unwrap_or(0)
    }
}

impl ReadValue for u16 {
    fn read_value(r: &Reader<'_>, g: &str, n: &str) -> Self {
        r.typed(g, n, "a port", |v| {
            v.as_int().and_then(|p| u16::try_from(p).ok())
        })
        .unwrap_or(0)
    }
}

impl ReadValue for f64 {
    fn read_value(r: &Reader<'_>, g: &str, n: &str) -> Self {
        r.typed(g, n, "a float", Value::as_float).unwrap_or(0.0)
    }
}

impl ReadValue for bool {
    fn read_value(r: &Reader<'_>, g: &str, n: &str) -> Self {
        r.typed(g, n, "a boolean", Value::as_bool).unwrap_or(false)
    }
}

impl ReadValue for Vec<String> {
    fn read_value(r: &Reader<'_>, g: &str, n: &str) -> Self {
        r.typed(g, n, "a list", |v| v.as_list().map(<[String]>::to_vec))
            .unwrap_or_default()
    }
}

impl ReadValue for Accepted {
    fn read_value(_: &Reader<'_>, _: &str, _: &str) -> Self {
        Accepted
    }
}

/// How a field's type shapes its option's registration: an [`Accepted`]
/// option is unchecked; the others are registered as declared.
pub trait Registration {
    /// The option as the field's type registers it.
    fn register(opt: Opt) -> Opt {
        opt
    }
}

impl Registration for Accepted {
    fn register(opt: Opt) -> Opt {
        opt.unchecked()
    }
}

macro_rules! registered_as_declared {
    ($($ty:ty),*) => { $(impl Registration for $ty {})* };
}
registered_as_declared!(
    Option<String>,
    String,
    Option<Secret>,
    Secret,
    Option<i64>,
    i64,
    u16,
    f64,
    bool,
    Vec<String>
);

/// Declares a group of options once: the struct, and its [`Group`]
/// implementation (the registrations and the typed read).
///
/// Each field is an option named after the field, written
/// `name: Type = Opt::of(OptType…)…` with the builder calls of [`Opt`]
/// (default, help, namespace, deprecated names…). The field's type says how
/// the value is read ([`ReadValue`]); a type of the service's own reads
/// through its own `ReadValue` and [`Registration`] implementations. A
/// trailing `flatten { field: Group = namespace(…), … }` block embeds
/// groups declared elsewhere (keystoneauth's password options, say) in the
/// same INI group, under the namespace given; their options register after
/// the fields'.
#[macro_export]
macro_rules! group {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $fvis:vis $field:ident : $fty:ty = $spec:expr
            ),* $(,)?
        }
        $(flatten {
            $(
                $(#[$gmeta:meta])*
                $gvis:vis $gfield:ident : $gty:ty = namespace($gns:expr)
            ),* $(,)?
        })?
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $( $(#[$fmeta])* $fvis $field: $fty, )*
            $($( $(#[$gmeta])* $gvis $gfield: $gty, )*)?
        }

        impl $crate::Group for $name {
            fn opts(group: &str) -> ::std::vec::Vec<$crate::Opt> {
                #[allow(unused_mut)]
                let mut opts = ::std::vec![$(
                    <$fty as $crate::Registration>::register(
                        $crate::Opt::at($spec, group, stringify!($field)),
                    )
                ),*];
                $($(
                    opts.extend(
                        <$gty as $crate::Group>::opts(group)
                            .into_iter()
                            .map(|o| o.namespace($gns)),
                    );
                )*)?
                opts
            }

            fn read(reader: &$crate::Reader<'_>, group: &str) -> Self {
                $name {
                    $( $field: <$fty as $crate::ReadValue>::read_value(
                        reader,
                        group,
                        stringify!($field),
                    ), )*
                    $($( $gfield: <$gty as $crate::Group>::read(reader, group), )*)?
                }
            }
        }
    };
}

/// Declares a service's configuration once: a struct with one field per
/// INI group (`field: GroupType = "group"`), each a [`Group`], plus one
/// field of the service's own that is not read from options (its
/// visibility is also that of `read`). It generates `opts()`, every group's
/// options in declaration order, and `read(reader, <own field>)`.
#[macro_export]
macro_rules! groups {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $fvis:vis $field:ident : $fty:ty = $group:literal
            ),* $(,)?
        }
        $(#[$rmeta:meta])*
        $rvis:vis $rest:ident : $rty:ty
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $( $(#[$fmeta])* $fvis $field: $fty, )*
            $(#[$rmeta])*
            $rvis $rest: $rty,
        }

        impl $name {
            /// Every option of every group, in declaration order.
            pub fn opts() -> ::std::vec::Vec<$crate::Opt> {
                let mut opts = ::std::vec::Vec::new();
                $( opts.extend(<$fty as $crate::Group>::opts($group)); )*
                opts
            }

            /// Every group read from `reader`.
            $rvis fn read(reader: &$crate::Reader<'_>, $rest: $rty) -> Self {
                $name {
                    $( $field: <$fty as $crate::Group>::read(reader, $group), )*
                    $rest,
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{Accepted, Group, Reader};
    use crate::{Config, Opt, OptType, Schema, ini, sample};

    crate::group! {
        /// `[widget]`: a group as a service declares one.
        #[derive(Debug, PartialEq)]
        pub struct Widget {
            /// `size`.
            pub size: i64 = Opt::of(OptType::Integer { min: Some(1), max: None })
                .default("3")
                .deprecated_name("widget_size")
                .namespace("demo")
                .help("How big a widget is."),
            /// `label`.
            pub label: Option<String> = Opt::of(OptType::string()).namespace("demo"),
            /// `legacy`: accepted, no effect.
            pub legacy: Accepted = Opt::of(OptType::Boolean)
                .ignored("kept for old files")
                .namespace("demo"),
        }
        flatten {
            /// The shared part, under its own namespace.
            pub part: Part = namespace("part-lib"),
        }
    }

    crate::group! {
        /// Options shared by several groups.
        #[derive(Debug, PartialEq)]
        pub struct Part {
            /// `colour`.
            pub colour: String = Opt::of(OptType::string()).default("blue"),
        }
    }

    fn load(text: &str) -> Result<Config, String> {
        let mut schema = Schema::new();
        for opt in Widget::opts("widget") {
            schema.register(opt).map_err(|e| e.to_string())?;
        }
        let file = ini::parse("w.conf", text.as_bytes()).map_err(|e| e.to_string())?;
        Config::from_files(Arc::new(schema), vec![file])
            .map(|(config, _)| config)
            .map_err(|errors| errors[0].to_string())
    }

    /// One declaration gives the registration (name, default, deprecated
    /// name, namespace, help), the sample's entry and the typed read.
    #[test]
    fn one_declaration_registers_samples_and_reads_an_option() {
        let opts = Widget::opts("widget");
        let names: Vec<&str> = opts.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["size", "label", "legacy", "colour"]);
        let size = &opts[0];
        assert_eq!(size.key().to_string(), "[widget]/size");
        assert_eq!(size.default.as_deref(), Some("3"));
        assert_eq!(size.deprecated[0].to_string(), "[widget]/widget_size");
        assert_eq!(opts[3].namespace, "part-lib");
        assert!(!opts[2].checked, "an Accepted option is unchecked");

        let mut schema = Schema::new();
        for opt in opts {
            schema.register(opt).unwrap_or_else(|e| panic!("{e}"));
        }
        let text = sample::generate(&schema, &[], &["demo"]);
        assert!(text.contains("# How big a widget is."), "{text}");
        assert!(text.contains("#size = 3"), "{text}");

        let read = |text: &str| {
            let config = load(text).unwrap_or_else(|e| panic!("{e}"));
            Widget::read(&Reader::new(&config), "widget")
        };
        assert_eq!(
            read(""),
            Widget {
                size: 3,
                label: None,
                legacy: Accepted,
                part: Part {
                    colour: "blue".into()
                },
            }
        );
        let set = read("[widget]\nwidget_size = 5\nlabel = l\nlegacy = maybe\ncolour = red\n");
        assert_eq!((set.size, set.label.as_deref()), (5, Some("l")));
        assert_eq!(set.part.colour, "red");
        let refused = load("[widget]\nsize = 0\n").err().unwrap_or_default();
        assert!(refused.contains("[widget]/size"), "{refused}");
    }

    /// A field whose type does not match its option's is reported by the
    /// reader, not read as a wrong value.
    #[test]
    fn a_field_of_the_wrong_type_is_a_mismatch() {
        crate::group! {
            /// A mistake: an integer option read into a boolean.
            pub struct Wrong {
                /// `size`.
                pub size: bool = Opt::of(OptType::Integer { min: None, max: None }).default("3"),
            }
        }
        let mut schema = Schema::new();
        for opt in Wrong::opts("wrong") {
            schema.register(opt).unwrap_or_else(|e| panic!("{e}"));
        }
        let (config, _) =
            Config::from_files(Arc::new(schema), Vec::new()).unwrap_or_else(|e| panic!("{}", e[0]));
        let reader = Reader::new(&config);
        assert!(!Wrong::read(&reader, "wrong").size);
        assert_eq!(reader.keys_read().len(), 1);
        let mismatches = reader.mismatches();
        assert!(
            mismatches[0].starts_with("[wrong]/size is not a boolean"),
            "{mismatches:?}"
        );
    }
}
