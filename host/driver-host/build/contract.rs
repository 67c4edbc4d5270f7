//! Reads the functions a component exports from the contract's WIT files
//! (`wit/magnum-driver@<version>/`), so that the host declares none of
//! them by hand: the table of exports with the version that introduced
//! each (`contract::FUNCTIONS`), and the `Request` the host sends, one
//! variant per function with the WIT parameters as the host's types.
//!
//! Used by the build script, and by `contract::tests`, which adds a
//! function to a copy of the WIT and reads what comes of it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use wit_parser::{Resolve, Type, TypeDefKind, TypeOwner};

/// The interfaces a component exports, in the order of the table.
pub const EXPORTED: [&str; 3] = ["driver", "lifecycle", "status"];

/// The module the host's bindings of each interface are in (`package.rs`).
const MODULES: [(&str, &str); 4] = [
    ("types", "wt"),
    ("driver", "wd"),
    ("lifecycle", "wl"),
    ("status", "ws"),
];

/// One exported function, as the newest version declares it.
#[derive(Debug)]
pub struct Export {
    pub interface: &'static str,
    /// The WIT name (`create-cluster`).
    pub name: String,
    /// The oldest version that declares it (`(1, 1)`).
    pub since: Version,
    /// The host's type of each parameter (`wt::CallContext`).
    pub params: Vec<String>,
    /// The first paragraph of its WIT documentation.
    pub doc: String,
}

/// A contract version, `(major, minor)`.
pub type Version = (u64, u64);

/// The contract's version directories under `wit`, oldest first.
pub fn versions(wit: &Path) -> Result<Vec<(Version, PathBuf)>, String> {
    let entries = std::fs::read_dir(wit).map_err(|e| format!("{}: {e}", wit.display()))?;
    let mut out = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let Some(version) = name.strip_prefix("magnum-driver@") else {
            continue;
        };
        let mut parts = version.split('.').map(str::parse::<u64>);
        match (parts.next(), parts.next()) {
            (Some(Ok(major)), Some(Ok(minor))) => out.push(((major, minor), path)),
            _ => return Err(format!("{}: not a version", path.display())),
        }
    }
    out.sort();
    Ok(out)
}

/// Every exported function of the newest version, in the WIT files' order.
pub fn exports(wit: &Path) -> Result<Vec<Export>, String> {
    let mut since: Vec<(String, Version)> = Vec::new();
    let mut newest = Vec::new();
    for (version, dir) in versions(wit)? {
        let mut resolve = Resolve::new();
        let (package, _) = resolve
            .push_dir(&dir)
            .map_err(|e| format!("{}: {e:#}", dir.display()))?;
        newest.clear();
        for interface in EXPORTED {
            let id = resolve.packages[package]
                .interfaces
                .get(interface)
                .ok_or_else(|| format!("{}: no interface {interface}", dir.display()))?;
            for (name, f) in &resolve.interfaces[*id].functions {
                if !since.iter().any(|(n, _)| n == name) {
                    since.push((name.clone(), version));
                }
                let params = f
                    .params
                    .iter()
                    .map(|p| host_type(&resolve, &p.ty))
                    .collect::<Result<_, _>>()
                    .map_err(|e| format!("{}: {name}: {e}", dir.display()))?;
                newest.push(Export {
                    interface,
                    name: name.clone(),
                    since: version,
                    params,
                    doc: first_paragraph(f.docs.contents.as_deref().unwrap_or("")),
                });
            }
        }
    }
    for export in &mut newest {
        if let Some((_, v)) = since.iter().find(|(n, _)| *n == export.name) {
            export.since = *v;
        }
    }
    Ok(newest)
}

/// The type the host's `Request` carries for a WIT parameter: the
/// bindings' type, and the borrowed form of `cluster-state`.
fn host_type(resolve: &Resolve, ty: &Type) -> Result<String, String> {
    Ok(match ty {
        Type::Bool => "bool".into(),
        Type::U32 => "u32".into(),
        Type::S32 => "i32".into(),
        Type::U64 => "u64".into(),
        Type::S64 => "i64".into(),
        Type::String => "String".into(),
        Type::Id(id) => {
            let def = &resolve.types[*id];
            match &def.kind {
                // A `use`d type: the one it names.
                TypeDefKind::Type(t) => host_type(resolve, t)?,
                TypeDefKind::List(t) => format!("Vec<{}>", host_type(resolve, t)?),
                TypeDefKind::Option(t) => format!("Option<{}>", host_type(resolve, t)?),
                TypeDefKind::Record(_) | TypeDefKind::Variant(_) | TypeDefKind::Enum(_) => {
                    let name = def.name.as_deref().unwrap_or_default();
                    if name == "cluster-state" {
                        return Ok("StateRef<'a>".into());
                    }
                    let TypeOwner::Interface(owner) = def.owner else {
                        return Err(format!("{name} is not in an interface"));
                    };
                    let interface = resolve.interfaces[owner].name.as_deref().unwrap_or("");
                    let module = MODULES
                        .iter()
                        .find(|(i, _)| *i == interface)
                        .map(|(_, m)| *m)
                        .ok_or_else(|| format!("no bindings module for {interface}"))?;
                    format!("{module}::{}", pascal(name))
                }
                other => return Err(format!("a parameter of type {other:?}")),
            }
        }
        other => return Err(format!("a parameter of type {other:?}")),
    })
}

/// `create-cluster` → `CreateCluster`.
pub fn pascal(name: &str) -> String {
    name.split('-')
        .map(|p| {
            let mut c = p.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

fn first_paragraph(doc: &str) -> String {
    doc.split("\n\n")
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// `contract::FUNCTIONS`.
pub fn functions_rs(exports: &[Export]) -> String {
    let mut out = String::from(
        "/// Every function a component exports, in the WIT files' order, with\n\
         /// the version that introduced it (read from `wit/` by the build).\n\
         pub const FUNCTIONS: &[Function] = &[\n",
    );
    for e in exports {
        let (major, minor) = e.since;
        let _ = writeln!(
            out,
            "    f({:?}, {:?}, Contract::V{major}_{minor}),",
            e.interface, e.name
        );
    }
    out.push_str("];\n\n/// The interfaces a component exports.\n");
    let _ = writeln!(
        out,
        "pub const EXPORTED_INTERFACES: [&str; {}] = {EXPORTED:?};",
        EXPORTED.len()
    );
    out
}

/// `package::Request` and its `function()`.
pub fn request_rs(exports: &[Export]) -> String {
    let mut out = String::from(
        "/// What a request asks of the component: one variant per exported\n\
         /// function of the newest contract (read from `wit/` by the build),\n\
         /// with its arguments in that version's WIT form (`dispatch` lowers\n\
         /// them as the component's version wants).\n\
         pub(crate) enum Request<'a> {\n",
    );
    for e in exports {
        let _ = writeln!(out, "    #[doc = {:?}]", e.doc);
        if e.params.is_empty() {
            let _ = writeln!(out, "    {},", pascal(&e.name));
        } else {
            let _ = writeln!(out, "    {}({}),", pascal(&e.name), e.params.join(", "));
        }
    }
    out.push_str(
        "}\n\nimpl Request<'_> {\n    \
         /// The WIT name of the function.\n    \
         pub(crate) fn function(&self) -> &'static str {\n        \
         match self {\n",
    );
    for e in exports {
        let fields = if e.params.is_empty() { "" } else { "(..)" };
        let _ = writeln!(
            out,
            "            Request::{}{fields} => {:?},",
            pascal(&e.name),
            e.name
        );
    }
    out.push_str("        }\n    }\n}\n");
    out
}
