//! A test-only stand-in for Cluster API's topology patch engine: the
//! ClusterClass's inline patches applied to one of its templates for one
//! topology Cluster, as the topology controller does before it creates
//! the cluster's objects. With it the tests check what the patches make
//! of the templates (`patched_tests`) against the Go driver's
//! `patched-*.yaml` goldens, without a management cluster.
//!
//! It ports the evaluator of the Go driver's `patches_test.go` (retired at
//! 0798596) and follows Cluster API (`internal/controllers/topology/
//! cluster/patches`, the inline generator and the engine) where that one
//! took shortcuts:
//!
//! - a definition's selector matches on apiVersion and kind, then on
//!   `matchResources` by where the template sits ([`Holder`]);
//!   `machineDeploymentClass` names may be `*`, `prefix*` or `*suffix`;
//! - `enabledIf` is rendered only for a template some definition of the
//!   patch selects, and enables the patch when the rendered text, read as
//!   YAML, is the boolean `true`;
//! - every template sees the Cluster's variables and `builtin.cluster`;
//!   the control plane's two templates also see `builtin.controlPlane`, a
//!   MachineDeployment's two templates its variable overrides and
//!   `builtin.machineDeployment` (the Go evaluator gave every template
//!   `builtin.controlPlane.version`);
//! - `valueFrom.variable` may be a path (`a.b`, `list[0]`);
//! - template output is read as YAML 1.1 as far as `serde-saphyr` goes
//!   (Cluster API uses go-yaml v2): `yes`/`on` are booleans and `0644`
//!   octal;
//! - only the patched template's `spec` is kept;
//! - the templates go through the Go-template subset of [`template`],
//!   whose `semverCompare` ([`semver`]) compares versions by precedence
//!   where the Go evaluator compared strings.
//!
//! Cluster API objects' fields are not defaulted or validated here: the
//! Go test also checked the patched templates against the CRD schemas,
//! which this crate does not have.

mod json_patch;
mod semver;
mod template;

use std::fmt;

use serde_json::{Map, Value, json};

use crate::names::KIND_CLUSTER_CLASS;
use json_patch::Op;
use template::GoValue;

/// Why the patches could not be applied: what would make Cluster API's
/// topology reconcile fail (a template error, a JSON patch on a missing
/// path), or a template this evaluator cannot read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EvalError(String);

impl EvalError {
    pub(crate) fn new(message: impl Into<String>) -> EvalError {
        EvalError(message.into())
    }

    /// The error with what was being done before it.
    fn context(self, what: impl fmt::Display) -> EvalError {
        EvalError(format!("{what}: {}", self.0))
    }
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a template sits in a topology Cluster: this decides which
/// selectors match it and which variables it sees.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Holder<'a> {
    /// The class's infrastructure template (the OpenStackClusterTemplate).
    InfrastructureCluster,
    /// The control plane's template (the KubeadmControlPlaneTemplate).
    ControlPlane,
    /// The control plane's machine infrastructure template.
    ControlPlaneMachines,
    /// The bootstrap template of the MachineDeployment topology so named.
    WorkerBootstrap(&'a str),
    /// The infrastructure template of the MachineDeployment topology so
    /// named.
    WorkerMachines(&'a str),
}

/// A template after the patches.
#[derive(Debug)]
pub(crate) struct Patched {
    /// The template, patched.
    pub(crate) template: Value,
    /// The patches that changed it, in order.
    pub(crate) applied: Vec<String>,
}

/// Applies the patches of the ClusterClass among `class_objects` to the
/// template of `holder`, for the topology Cluster `cluster`.
pub(crate) fn patch_template(
    class_objects: &[Value],
    cluster: &Value,
    holder: Holder<'_>,
) -> Result<Patched, EvalError> {
    let class = class_objects
        .iter()
        .find(|o| o["kind"] == KIND_CLUSTER_CLASS)
        .ok_or_else(|| EvalError::new("no ClusterClass among the class objects"))?;
    let machine_deployment = match holder {
        Holder::WorkerBootstrap(name) | Holder::WorkerMachines(name) => {
            Some(machine_deployment(cluster, name)?)
        }
        _ => None,
    };
    let md_class = machine_deployment.and_then(|md| md["class"].as_str());
    let reference = template_ref(class, holder, md_class)?;
    let template = class_objects
        .iter()
        .find(|o| {
            o["apiVersion"] == reference["apiVersion"]
                && o["kind"] == reference["kind"]
                && o["metadata"]["name"] == reference["name"]
        })
        .ok_or_else(|| EvalError::new(format!("no class object for {reference}")))?;
    let variables = variables(cluster, holder, machine_deployment)?;
    apply_patches(
        &class["spec"]["patches"],
        holder,
        md_class,
        template,
        &variables,
    )
}

/// Checks that `text` is within the Go-template subset the evaluator
/// knows.
pub(crate) fn parse_template(text: &str) -> Result<(), EvalError> {
    template::Template::parse(text).map(drop)
}

/// The MachineDeployment topology `name` of `cluster`.
fn machine_deployment<'a>(cluster: &'a Value, name: &str) -> Result<&'a Value, EvalError> {
    cluster["spec"]["topology"]["workers"]["machineDeployments"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|md| md["name"] == name)
        .ok_or_else(|| EvalError::new(format!("no MachineDeployment topology {name:?}")))
}

/// The class's reference to the template of `holder`.
fn template_ref<'a>(
    class: &'a Value,
    holder: Holder<'_>,
    md_class: Option<&str>,
) -> Result<&'a Value, EvalError> {
    let spec = &class["spec"];
    let worker = || {
        spec["workers"]["machineDeployments"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["class"].as_str() == md_class)
            .ok_or_else(|| EvalError::new(format!("no MachineDeployment class {md_class:?}")))
    };
    let reference = match holder {
        Holder::InfrastructureCluster => &spec["infrastructure"]["templateRef"],
        Holder::ControlPlane => &spec["controlPlane"]["templateRef"],
        Holder::ControlPlaneMachines => {
            &spec["controlPlane"]["machineInfrastructure"]["templateRef"]
        }
        Holder::WorkerBootstrap(_) => &worker()?["bootstrap"]["templateRef"],
        Holder::WorkerMachines(_) => &worker()?["infrastructure"]["templateRef"],
    };
    if reference.is_object() {
        Ok(reference)
    } else {
        Err(EvalError::new(format!(
            "the class has no template for {holder:?}"
        )))
    }
}

/// The variables the template of `holder` sees, by name, `builtin`
/// among them: the Cluster's topology variables, overridden by those of
/// the MachineDeployment for its templates, and the builtins Cluster API
/// computes that do not depend on objects it has yet to create (not the
/// generated names, nor the Cluster's UID).
fn variables(
    cluster: &Value,
    holder: Holder<'_>,
    machine_deployment: Option<&Value>,
) -> Result<Map<String, Value>, EvalError> {
    let topology = &cluster["spec"]["topology"];
    let mut variables = Map::new();
    let lists = [
        Some(&topology["variables"]),
        machine_deployment.map(|md| &md["variables"]["overrides"]),
    ];
    for list in lists.into_iter().flatten() {
        for v in list.as_array().into_iter().flatten() {
            let name = v["name"]
                .as_str()
                .ok_or_else(|| EvalError::new(format!("a topology variable has no name: {v}")))?;
            variables.insert(name.to_string(), v["value"].clone());
        }
    }
    let version = &topology["version"];
    let mut builtin = json!({
        "cluster": {
            "name": cluster["metadata"]["name"],
            "namespace": cluster["metadata"]["namespace"],
            "topology": { "version": version, "class": topology["classRef"]["name"] },
        },
    });
    match (holder, machine_deployment) {
        (Holder::ControlPlane | Holder::ControlPlaneMachines, _) => {
            let mut control_plane = json!({ "version": version });
            if let Some(replicas) = topology["controlPlane"].get("replicas") {
                control_plane["replicas"] = replicas.clone();
            }
            builtin["controlPlane"] = control_plane;
        }
        (_, Some(md)) => {
            let mut deployment = json!({
                "version": version,
                "class": md["class"],
                "topologyName": md["name"],
            });
            if let Some(replicas) = md.get("replicas") {
                deployment["replicas"] = replicas.clone();
            }
            builtin["machineDeployment"] = deployment;
        }
        _ => {}
    }
    variables.insert("builtin".into(), builtin);
    Ok(variables)
}

/// Applies `patches` in order to `template`.
fn apply_patches(
    patches: &Value,
    holder: Holder<'_>,
    md_class: Option<&str>,
    template: &Value,
    variables: &Map<String, Value>,
) -> Result<Patched, EvalError> {
    let data = GoValue::from_json(&Value::Object(variables.clone()));
    let mut doc = template.clone();
    let mut applied = Vec::new();
    for patch in patches.as_array().into_iter().flatten() {
        let name = patch["name"].as_str().unwrap_or_default();
        let in_patch = |e: EvalError| e.context(format_args!("patch {name}"));
        let definitions: Vec<&Value> = patch["definitions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| selects(&d["selector"], holder, md_class, template))
            .collect();
        if definitions.is_empty() {
            continue;
        }
        if let Some(condition) = patch.get("enabledIf") {
            let condition = condition
                .as_str()
                .ok_or_else(|| in_patch(EvalError::new("enabledIf is not a string")))?;
            let rendered = template::render(condition, &data)
                .and_then(|text| yaml(&text))
                .map_err(|e| in_patch(e.context("enabledIf")))?;
            if rendered != Value::Bool(true) {
                continue;
            }
        }
        for definition in definitions {
            for operation in definition["jsonPatches"].as_array().into_iter().flatten() {
                apply_operation(&mut doc, operation, variables, &data).map_err(in_patch)?;
            }
        }
        applied.push(name.to_string());
    }
    // Cluster API keeps only the spec of a patched template.
    let mut patched = template.clone();
    patched["spec"] = doc["spec"].take();
    Ok(Patched {
        template: patched,
        applied,
    })
}

/// Whether a definition's `selector` picks the template of `holder`.
fn selects(selector: &Value, holder: Holder<'_>, md_class: Option<&str>, template: &Value) -> bool {
    if selector["apiVersion"] != template["apiVersion"] || selector["kind"] != template["kind"] {
        return false;
    }
    let resources = &selector["matchResources"];
    match holder {
        Holder::InfrastructureCluster => resources["infrastructureCluster"] == true,
        Holder::ControlPlane | Holder::ControlPlaneMachines => resources["controlPlane"] == true,
        Holder::WorkerBootstrap(_) | Holder::WorkerMachines(_) => {
            let Some(class) = md_class else { return false };
            resources["machineDeploymentClass"]["names"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .any(|pattern| class_matches(pattern, class))
        }
    }
}

/// A `machineDeploymentClass` name: exact, `*`, or a `*` at one end.
fn class_matches(pattern: &str, class: &str) -> bool {
    if pattern == "*" || pattern == class {
        return true;
    }
    if let Some(suffix) = pattern.strip_prefix('*') {
        return class.ends_with(suffix);
    }
    if let Some(prefix) = pattern.strip_suffix('*') {
        return class.starts_with(prefix);
    }
    false
}

/// Applies one `jsonPatches` entry, its value computed first.
fn apply_operation(
    doc: &mut Value,
    operation: &Value,
    variables: &Map<String, Value>,
    data: &GoValue,
) -> Result<(), EvalError> {
    let op = Op::parse(operation["op"].as_str().unwrap_or_default())?;
    let path = operation["path"]
        .as_str()
        .ok_or_else(|| EvalError::new(format!("an operation has no path: {operation}")))?;
    let value = match op {
        Op::Remove => None,
        Op::Add | Op::Replace => Some(value(operation, variables, data)?),
    };
    json_patch::apply(doc, op, path, value)
}

/// The value of an `add` or `replace`: `value`, or `valueFrom`'s variable
/// or rendered template; exactly one of them.
fn value(
    operation: &Value,
    variables: &Map<String, Value>,
    data: &GoValue,
) -> Result<Value, EvalError> {
    let from = operation.get("valueFrom");
    let variable = from.and_then(|f| f.get("variable"));
    let template = from.and_then(|f| f.get("template"));
    match (operation.get("value"), variable, template) {
        (Some(v), None, None) if from.is_none() => Ok(v.clone()),
        (None, Some(Value::String(path)), None) => variable_value(variables, path),
        (None, None, Some(Value::String(text))) => template::render(text, data)
            .and_then(|rendered| yaml(&rendered))
            .map_err(|e| e.context(format_args!("template of {}", operation["path"]))),
        _ => Err(EvalError::new(format!(
            "an operation needs exactly one of value, valueFrom.variable and valueFrom.template: {operation}"
        ))),
    }
}

/// The value at `path` (`name`, `name.field`, `name[0].field`) among the
/// variables.
fn variable_value(variables: &Map<String, Value>, path: &str) -> Result<Value, EvalError> {
    let missing = || EvalError::new(format!("variable {path:?} does not exist"));
    let mut segments = path.split('.');
    let first = segments.next().unwrap_or_default();
    let (name, index) = segment(first).ok_or_else(missing)?;
    let mut current = variables.get(name).ok_or_else(missing)?;
    if let Some(i) = index {
        current = current.get(i).ok_or_else(missing)?;
    }
    for s in segments {
        let (field, index) = segment(s).ok_or_else(missing)?;
        current = current.get(field).ok_or_else(missing)?;
        if let Some(i) = index {
            current = current.get(i).ok_or_else(missing)?;
        }
    }
    Ok(current.clone())
}

/// A path segment `name` or `name[i]`.
fn segment(s: &str) -> Option<(&str, Option<usize>)> {
    match s.split_once('[') {
        None if !s.contains(']') => Some((s, None)),
        None => None,
        Some((name, rest)) => {
            let index = rest.strip_suffix(']')?.parse().ok()?;
            Some((name, Some(index)))
        }
    }
}

/// Rendered template text as the JSON value Cluster API reads from it
/// (`sigs.k8s.io/yaml`): empty text is null.
fn yaml(text: &str) -> Result<Value, EvalError> {
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    let options = serde_saphyr::options! { legacy_octal_numbers: true };
    serde_saphyr::from_str_with_options(text, options)
        .map_err(|e| EvalError::new(format!("rendered text {text:?} is not YAML: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each case was checked against `sigs.k8s.io/yaml` v1.6.0.
    #[test]
    fn rendered_text_is_read_as_go_yaml_v2_reads_it() {
        for (text, want) in [
            ("true", json!(true)),
            (" true\n", json!(true)),
            ("", Value::Null),
            ("yes", json!(true)),
            ("on", json!(true)),
            ("y", json!(true)),
            ("false", json!(false)),
            ("0644", json!(420)),
            ("\"0644\"", json!("0644")),
            ("40", json!(40)),
            ("- a\n- b\n", json!(["a", "b"])),
            (
                "name: x\nvalue: \"1\"",
                json!({ "name": "x", "value": "1" }),
            ),
        ] {
            assert_eq!(yaml(text), Ok(want), "{text:?}");
        }
        assert!(yaml("- *.example.com").is_err());
    }

    #[test]
    fn variables_are_read_by_path() {
        let variables = json!({ "a": { "b": [{ "c": 1 }] }, "l": [true] });
        let variables = variables.as_object().unwrap();
        assert_eq!(
            variable_value(variables, "a"),
            Ok(json!({ "b": [{ "c": 1 }] }))
        );
        assert_eq!(variable_value(variables, "a.b[0].c"), Ok(json!(1)));
        assert_eq!(variable_value(variables, "l[0]"), Ok(json!(true)));
        for path in ["x", "a.x", "l[1]", "a.b[", "a.b]"] {
            assert!(variable_value(variables, path).is_err(), "{path}");
        }
    }

    #[test]
    fn machine_deployment_class_names_match_with_wildcards() {
        for (pattern, want) in [
            ("default-worker", true),
            ("*", true),
            ("default-*", true),
            ("*-worker", true),
            ("gpu-*", false),
            ("default", false),
        ] {
            assert_eq!(class_matches(pattern, "default-worker"), want, "{pattern}");
        }
    }
}
