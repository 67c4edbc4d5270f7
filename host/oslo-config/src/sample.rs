//! Sample configuration files in `oslo-config-generator`'s layout.

use crate::schema::{Opt, Schema};
use crate::types::OptType;

/// The width of the sample's comment lines, as oslo-config-generator wraps
/// them.
const WIDTH: usize = 79;

/// Renders every option of `schema` marked for the sample: `[DEFAULT]`
/// first, then the other groups sorted by name; within a group, the options
/// of each namespace (in order of first registration) under a `From …`
/// banner, each with its wrapped help, type, choices, bounds, deprecated
/// names and commented-out default. `preamble` (comment lines, without the
/// `#`) opens the file. Within a group, the namespaces listed in
/// `namespace_order` come first, in that order (oslo-config-generator
/// follows its configuration file), then the others in order of first
/// registration.
pub fn generate(schema: &Schema, preamble: &[&str], namespace_order: &[&str]) -> String {
    let mut out = String::new();
    for line in preamble {
        push_comment(&mut out, line);
    }
    if !preamble.is_empty() {
        out.push('\n');
    }
    for (i, (group, opts)) in in_sample_order(schema, namespace_order).iter().enumerate() {
        if i > 0 {
            out.push_str("\n\n");
        }
        out.push_str(&format!("[{group}]\n"));
        let mut namespace = None;
        for o in opts {
            if namespace != Some(o.namespace.as_str()) {
                namespace = Some(o.namespace.as_str());
                out.push_str(&format!("\n#\n# From {}\n#\n", o.namespace));
            }
            out.push('\n');
            render(&mut out, o);
        }
    }
    out
}

/// The options of `schema` marked for the sample, by group: `[DEFAULT]`
/// first, then the others by name; within a group, by namespace (those of
/// `namespace_order` first, in that order, then the others in order of
/// first registration), each namespace's options in order of registration.
fn in_sample_order<'a>(
    schema: &'a Schema,
    namespace_order: &[&str],
) -> Vec<(&'a str, Vec<&'a Opt>)> {
    let mut groups: Vec<&str> = schema.groups().collect();
    groups.sort_by_key(|g| (*g != "DEFAULT", *g));
    groups
        .into_iter()
        .filter_map(|group| {
            let mut opts: Vec<&Opt> = schema
                .opts()
                .iter()
                .filter(|o| o.group == group && o.in_sample)
                .collect();
            let mut first_seen: Vec<&str> = Vec::new();
            for o in &opts {
                if !first_seen.contains(&o.namespace.as_str()) {
                    first_seen.push(&o.namespace);
                }
            }
            let rank = |ns: &str| {
                let listed = namespace_order.iter().position(|n| *n == ns);
                let seen = first_seen.iter().position(|n| *n == ns);
                (listed.unwrap_or(namespace_order.len()), seen)
            };
            // A stable sort keeps the order of registration within a
            // namespace.
            opts.sort_by_key(|o| rank(&o.namespace));
            (!opts.is_empty()).then_some((group, opts))
        })
        .collect()
}

/// The same options as [`generate`], in the same order, as a Markdown
/// reference: `preamble` (Markdown lines) first, then a `## [group]` section
/// per group with one table row per option: its name, type, default, and
/// its help, followed by its choices, bounds, older names, whether it is a
/// secret and, for an option accepted without effect, why.
pub fn markdown(schema: &Schema, preamble: &[&str], namespace_order: &[&str]) -> String {
    let mut out = String::new();
    for line in preamble {
        out.push_str(line);
        out.push('\n');
    }
    for (group, opts) in in_sample_order(schema, namespace_order) {
        out.push_str(&format!(
            "\n## [{group}]\n\n| option | type | default | meaning |\n|---|---|---|---|\n"
        ));
        for o in opts {
            let default = match o.default.as_deref() {
                None => "none".to_owned(),
                Some("") => "empty".to_owned(),
                Some(d) => format!("`{}`", d.replace('`', "'")),
            };
            let mut meaning = o.help.split_whitespace().collect::<Vec<_>>().join(" ");
            let mut notes = Vec::new();
            match &o.ty {
                OptType::String { choices } if !choices.is_empty() => {
                    let shown: Vec<String> = choices
                        .iter()
                        .map(|c| {
                            if c.is_empty() {
                                "''".to_owned()
                            } else {
                                format!("`{c}`")
                            }
                        })
                        .collect();
                    notes.push(format!("One of {}.", shown.join(", ")));
                }
                OptType::Integer { min, max } => notes.extend(bounds(
                    min.map(|m| m.to_string()),
                    max.map(|m| m.to_string()),
                )),
                OptType::Float { min, max } => notes.extend(bounds(
                    min.map(|m| m.to_string()),
                    max.map(|m| m.to_string()),
                )),
                _ => {}
            }
            if !o.deprecated.is_empty() {
                let old: Vec<String> = o
                    .deprecated
                    .iter()
                    .map(|k| format!("`[{}]/{}`", k.group, k.name))
                    .collect();
                notes.push(format!("Formerly {}.", old.join(", ")));
            }
            if o.secret {
                notes.push("Secret: never shown.".to_owned());
            }
            if let Some(reason) = &o.ignored {
                notes.push(format!("**Accepted, no effect:** {reason}."));
            }
            for n in notes {
                if !meaning.is_empty() {
                    meaning.push(' ');
                }
                meaning.push_str(&n);
            }
            out.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                o.name,
                o.ty.sample_name().trim_end_matches(" value"),
                cell(&default),
                cell(&meaning)
            ));
        }
    }
    out
}

/// The sentence giving an option's bounds, if it has any.
fn bounds(min: Option<String>, max: Option<String>) -> Option<String> {
    match (min, max) {
        (Some(a), Some(b)) => Some(format!("From {a} to {b}.")),
        (Some(a), None) => Some(format!("At least {a}.")),
        (None, Some(b)) => Some(format!("At most {b}.")),
        (None, None) => None,
    }
}

/// Text made safe for a Markdown table cell: a `|` would end the cell, and
/// `<name>` would be read as an HTML tag.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn push_comment(out: &mut String, line: &str) {
    if line.is_empty() {
        out.push_str("#\n");
    } else {
        out.push_str("# ");
        out.push_str(line);
        out.push('\n');
    }
}

fn render(out: &mut String, o: &Opt) {
    let mut help = o.help.trim().to_owned();
    if !help.is_empty() {
        help.push(' ');
    }
    help.push('(');
    help.push_str(o.ty.sample_name());
    help.push(')');
    for (i, paragraph) in help.split('\n').enumerate() {
        if i > 0 {
            out.push_str("#\n");
        }
        for line in wrap(paragraph, WIDTH - 2) {
            push_comment(out, &line);
        }
    }
    if let Some(reason) = &o.ignored {
        for line in wrap(&format!("Ignored: {reason}."), WIDTH - 2) {
            push_comment(out, &line);
        }
    }
    match &o.ty {
        OptType::String { choices } if !choices.is_empty() => {
            out.push_str("# Possible values:\n");
            for c in choices {
                let shown = if c.is_empty() { "''" } else { c };
                out.push_str(&format!("# {shown} - <No description provided>\n"));
            }
        }
        OptType::Integer { min, max } => {
            if let Some(min) = min {
                out.push_str(&format!("# Minimum value: {min}\n"));
            }
            if let Some(max) = max {
                out.push_str(&format!("# Maximum value: {max}\n"));
            }
        }
        OptType::Float { min, max } => {
            let show = |f: f64| crate::types::Value::Float(f).to_string();
            let show = |f: f64| {
                let s = show(f);
                s.strip_suffix(".0").map(str::to_owned).unwrap_or(s)
            };
            if let Some(min) = min {
                out.push_str(&format!("# Minimum value: {}\n", show(*min)));
            }
            if let Some(max) = max {
                out.push_str(&format!("# Maximum value: {}\n", show(*max)));
            }
        }
        OptType::Port => out.push_str("# Minimum value: 0\n# Maximum value: 65535\n"),
        _ => {}
    }
    for old in &o.deprecated {
        out.push_str(&format!(
            "# Deprecated group/name - [{}]/{}\n",
            old.group, old.name
        ));
    }
    match o.default.as_deref() {
        None => out.push_str(&format!("#{} = <None>\n", o.name)),
        Some("") => out.push_str(&format!("#{} =\n", o.name)),
        Some(d) if d.starts_with(' ') || d.ends_with(' ') => {
            out.push_str(&format!("#{} = \"{d}\"\n", o.name));
        }
        Some(d) => out.push_str(&format!("#{} = {d}\n", o.name)),
    }
}

/// Greedy wrapping like Python's `textwrap.wrap` without hyphen breaking:
/// words separated by whitespace runs (kept inside a line, dropped at line
/// ends); a word longer than the width gets a line of its own.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut pending_space = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        let space_len = rest.len() - rest.trim_start().len();
        let (space, after) = rest.split_at(space_len);
        let word_len = after.find(char::is_whitespace).unwrap_or(after.len());
        let (word, after) = after.split_at(word_len);
        rest = after;
        if !line.is_empty() {
            pending_space = space.to_owned();
        }
        if word.is_empty() {
            break;
        }
        let needed = line.chars().count() + pending_space.chars().count() + word.chars().count();
        if !line.is_empty() && needed > width {
            lines.push(std::mem::take(&mut line));
            pending_space.clear();
        }
        line.push_str(&pending_space);
        line.push_str(word);
        pending_space.clear();
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping() {
        assert_eq!(wrap("a b  c", 3), ["a b", "c"]);
        assert_eq!(
            wrap("relative log_file  paths. x", 80),
            ["relative log_file  paths. x"]
        );
        assert_eq!(
            wrap("averyveryverylongword b", 5),
            ["averyveryverylongword", "b"]
        );
        assert_eq!(wrap("", 5), Vec::<String>::new());
    }

    #[test]
    fn layout() {
        let mut s = Schema::new();
        let opts = [
            Opt::new("api", "port", OptType::Port)
                .default("9511")
                .help("The port for the Magnum API server.")
                .namespace("magnum.conf"),
            Opt::new("DEFAULT", "log_file", OptType::string())
                .deprecated_name("logfile")
                .help("Log file.")
                .namespace("oslo.log"),
            Opt::new("DEFAULT", "host", OptType::HostAddress)
                .help("Name of this node.")
                .namespace("magnum.conf"),
            Opt::new(
                "DEFAULT",
                "mode",
                OptType::String {
                    choices: vec!["a".into(), String::new()],
                },
            )
            .default("a")
            .namespace("magnum.conf"),
            Opt::new("api", "hidden", OptType::string()).hidden(),
            Opt::new("api", "list", OptType::list())
                .default("")
                .namespace("magnum.conf"),
            Opt::new(
                "api",
                "t",
                OptType::Float {
                    min: Some(0.0),
                    max: None,
                },
            )
            .default("60")
            .ignored("not used")
            .namespace("magnum.conf"),
        ];
        for o in opts {
            s.register(o).expect("register");
        }
        let want = "\
# Sample.
#

[DEFAULT]

#
# From oslo.log
#

# Log file. (string value)
# Deprecated group/name - [DEFAULT]/logfile
#log_file = <None>

#
# From magnum.conf
#

# Name of this node. (host address value)
#host = <None>

# (string value)
# Possible values:
# a - <No description provided>
# '' - <No description provided>
#mode = a


[api]

#
# From magnum.conf
#

# The port for the Magnum API server. (port value)
# Minimum value: 0
# Maximum value: 65535
#port = 9511

# (list value)
#list =

# (floating point value)
# Ignored: not used.
# Minimum value: 0
#t = 60
";
        let got = generate(&s, &["Sample.", ""], &[]);
        assert_eq!(got, want);
        assert!(!got.contains("hidden"));
    }

    #[test]
    fn markdown_reference() {
        let mut s = Schema::new();
        let opts = [
            Opt::new("api", "port", OptType::Port)
                .default("9511")
                .help("The port\nof the API | server <name>.")
                .namespace("magnum.conf"),
            Opt::new("DEFAULT", "log_file", OptType::string())
                .deprecated_name("logfile")
                .namespace("oslo.log"),
            Opt::new(
                "DEFAULT",
                "workers",
                OptType::Integer {
                    min: Some(1),
                    max: None,
                },
            )
            .default("")
            .secret()
            .ignored("not used")
            .namespace("magnum.conf"),
            Opt::new("api", "hidden", OptType::string()).hidden(),
        ];
        for o in opts {
            s.register(o).expect("register");
        }
        let want = "\
# Title

## [DEFAULT]

| option | type | default | meaning |
|---|---|---|---|
| `workers` | integer | empty | At least 1. Secret: never shown. **Accepted, no effect:** not used. |
| `log_file` | string | none | Formerly `[DEFAULT]/logfile`. |

## [api]

| option | type | default | meaning |
|---|---|---|---|
| `port` | port | `9511` | The port of the API \\| server &lt;name&gt;. |
";
        assert_eq!(markdown(&s, &["# Title"], &["magnum.conf"]), want);
    }
}
