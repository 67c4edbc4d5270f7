//! A sample policy file in the layout of `oslopolicy-sample-generator`:
//! every registered default commented out, with its description,
//! operations, intended scopes and deprecation notes.

use crate::enforcer::Rule;

/// The width `oslopolicy-sample-generator` wraps comments to.
const WIDTH: usize = 70;

/// Renders the rules as `oslopolicy-sample-generator --format yaml` does.
pub fn render(rules: &[Rule]) -> String {
    rules.iter().map(render_rule).collect()
}

fn render_rule(rule: &Rule) -> String {
    let mut text = String::new();
    if !rule.description.is_empty() {
        text.push_str(&help_text(&rule.description));
        text.push('\n');
    }
    for op in &rule.operations {
        if !op.method.is_empty() && !op.path.is_empty() {
            text.push_str(&format!("# {}  {}\n", op.method, op.path));
        }
    }
    if !rule.scope_types.is_empty() {
        text.push_str(&format!(
            "# Intended scope(s): {}\n",
            rule.scope_types.join(", ")
        ));
    }
    text.push_str(&format!(
        "#\"{}\": \"{}\"\n\n",
        rule.name, rule.check_string
    ));
    if let Some(dep) = &rule.deprecated {
        let deprecated = format!(
            "\"{}\":\"{}\" has been deprecated since {} in favor of \"{}\":\"{}\".",
            dep.name, dep.check_string, dep.since, rule.name, rule.check_string
        );
        text.push_str("# DEPRECATED\n");
        text.push_str(&help_text(&deprecated));
        text.push('\n');
        text.push_str(&help_text(&dep.reason));
        text.push('\n');
        if dep.name != rule.name {
            text.push_str(concat!(
                "# WARNING: A rule name change has been identified.\n",
                "#          This may be an artifact of new rules being\n",
                "#          included which require legacy fallback\n",
                "#          rules to ensure proper policy behavior.\n",
                "#          Alternatively, this may just be an alias.\n",
                "#          Please evaluate on a case by case basis\n",
                "#          keeping in mind the format for aliased\n",
                "#          rules is:\n",
                "#          \"old_rule_name\": \"new_rule_name\".\n",
            ));
            text.push_str(&format!("# \"{}\": \"rule:{}\"\n", dep.name, rule.name));
        }
        text.push('\n');
    }
    text
}

/// A description as comment lines: paragraphs wrapped to 70 columns,
/// indented lines kept as literal blocks, `#` alone for an empty text.
fn help_text(description: &str) -> String {
    let description = description.trim();
    if description.is_empty() {
        return "#".to_owned();
    }
    let mut lines: Vec<String> = Vec::new();
    let mut paragraph: Vec<&str> = Vec::new();
    for line in description.lines() {
        if line.trim().is_empty() {
            lines.extend(wrap(&paragraph.join(" ")));
            lines.push("#".to_owned());
            paragraph.clear();
        } else if line.len() == line.trim_start().len() {
            paragraph.push(line.trim_end());
        } else {
            if !paragraph.is_empty() {
                lines.extend(wrap(&paragraph.join(" ")));
                lines.push("#".to_owned());
                paragraph.clear();
            }
            lines.push(format!("# {}", line.trim_end()));
        }
    }
    if !paragraph.is_empty() {
        lines.extend(wrap(&paragraph.join(" ")));
    }
    lines.join("\n")
}

fn is_letter(c: char) -> bool {
    // Python's `[^\d\W]`: word characters that are not digits.
    (c.is_alphanumeric() || c == '_') && !c.is_numeric()
}

/// Splits text into words and runs of spaces, breaking hyphenated words
/// after their hyphens as Python's `textwrap` does (`break_on_hyphens`).
fn chunks(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let collect = |from: usize, to: usize| -> String { chars[from..to].iter().collect() };
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        if chars[i] == ' ' {
            while i < chars.len() && chars[i] == ' ' {
                i += 1;
            }
            out.push(collect(start, i));
            continue;
        }
        let mut piece = start;
        while i < chars.len() && chars[i] != ' ' {
            if chars[i] == '-' && i > piece && breaks_after(&chars, i) {
                out.push(collect(piece, i + 1));
                piece = i + 1;
            }
            i += 1;
        }
        if piece < i {
            out.push(collect(piece, i));
        }
    }
    out
}

/// Whether textwrap breaks a word after the hyphen at `h`: two letters (or
/// letter, hyphen, letter) before it, a letter and another letter
/// (optionally after a hyphen) after it.
fn breaks_after(chars: &[char], h: usize) -> bool {
    let at = |k: Option<usize>| k.and_then(|k| chars.get(k)).copied();
    let letter = |k: Option<usize>| at(k).is_some_and(is_letter);
    let before = (letter(h.checked_sub(2)) && letter(h.checked_sub(1)))
        || (letter(h.checked_sub(3))
            && at(h.checked_sub(2)) == Some('-')
            && letter(h.checked_sub(1)));
    let after = letter(Some(h + 1))
        && (letter(Some(h + 2)) || (at(Some(h + 2)) == Some('-') && letter(Some(h + 3))));
    before && after
}

/// Python's `textwrap.wrap(text, 70, initial_indent='# ',
/// subsequent_indent='# ')`.
fn wrap(text: &str) -> Vec<String> {
    let text: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_whitespace() || c == '\u{b}' {
                ' '
            } else {
                c
            }
        })
        .collect();
    let mut chunks: Vec<String> = chunks(&text);
    chunks.reverse();
    let indent = "# ";
    let width = WIDTH - indent.len();
    let len = |s: &str| s.chars().count();
    let mut lines = Vec::new();
    while !chunks.is_empty() {
        let mut line: Vec<String> = Vec::new();
        let mut line_len = 0;
        if !lines.is_empty() && chunks.last().is_some_and(|c| c.trim().is_empty()) {
            chunks.pop();
        }
        while let Some(c) = chunks.last() {
            let l = len(c);
            if line_len + l <= width {
                line_len += l;
                line.extend(chunks.pop());
            } else {
                break;
            }
        }
        if chunks.last().is_some_and(|c| len(c) > width) {
            // A word longer than a line: break it, after its last hyphen
            // when that fits.
            let space_left = (width - line_len).max(1);
            if let Some(chunk) = chunks.pop() {
                let cs: Vec<char> = chunk.chars().collect();
                let mut end = space_left;
                if cs.len() > space_left
                    && let Some(h) = cs[..space_left].iter().rposition(|c| *c == '-')
                    && h > 0
                    && cs[..h].iter().any(|c| *c != '-')
                {
                    end = h + 1;
                }
                line.push(cs[..end].iter().collect());
                chunks.push(cs[end..].iter().collect());
            }
        }
        if line.last().is_some_and(|c| c.trim().is_empty()) {
            line.pop();
        }
        if !line.is_empty() {
            lines.push(format!("{indent}{}", line.concat()));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_like_textwrap() {
        let text = "\"rule:admin_or_user\":\"((rule:context_is_admin) or (rule:is_user))\" has been deprecated since OpenStack 2023.2(Magnum 17.0.0) in favor of \"admin_or_project_member_user_or_cluster_user\":\"(rule:context_is_admin) or ((rule:project_member) and (rule:is_user))\".";
        assert_eq!(
            wrap(text),
            [
                "# \"rule:admin_or_user\":\"((rule:context_is_admin) or (rule:is_user))\"",
                "# has been deprecated since OpenStack 2023.2(Magnum 17.0.0) in favor",
                "# of \"admin_or_project_member_user_or_cluster_user\":\"(rule:context_is_",
                "# admin) or ((rule:project_member) and (rule:is_user))\".",
            ]
        );
    }

    #[test]
    fn breaks_hyphenated_words() {
        assert_eq!(
            chunks("a magnum-services x"),
            ["a", " ", "magnum-", "services", " ", "x"]
        );
        assert_eq!(chunks("x-y 1-2"), ["x-y", " ", "1-2"]);
    }

    #[test]
    fn help_text_keeps_literal_blocks() {
        assert_eq!(help_text(""), "#");
        assert_eq!(
            help_text("One.\n\n    literal\nTwo."),
            "# One.\n#\n#     literal\n# Two."
        );
    }
}
