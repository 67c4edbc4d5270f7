//! sprig's `semverCompare` (Masterminds/semver v3) for the constraints a
//! class can use without ranges: one comparison with a full version.
//!
//! The Go driver's evaluator compared the version as a string with
//! `v1.33`, which puts `v1.4.0` after it and `v1.100.0` before it. Here
//! versions are compared by semantic version precedence, and a
//! pre-release satisfies an ordering constraint only if the constraint
//! names a pre-release too (Masterminds' rule: `<1.33.0` does not match
//! `v1.32.0-rc.1`).

use std::cmp::Ordering;

use super::EvalError;

/// A semantic version; build metadata is dropped, as it does not take
/// part in comparisons.
#[derive(Debug, PartialEq, Eq)]
struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: Vec<PreRelease>,
}

/// A dot-separated identifier of a pre-release.
#[derive(Debug, PartialEq, Eq)]
enum PreRelease {
    Numeric(u64),
    Alphanumeric(String),
}

impl Ord for PreRelease {
    /// Numeric identifiers sort numerically and before alphanumeric ones,
    /// which sort as ASCII.
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PreRelease::Numeric(a), PreRelease::Numeric(b)) => a.cmp(b),
            (PreRelease::Numeric(_), PreRelease::Alphanumeric(_)) => Ordering::Less,
            (PreRelease::Alphanumeric(_), PreRelease::Numeric(_)) => Ordering::Greater,
            (PreRelease::Alphanumeric(a), PreRelease::Alphanumeric(b)) => a.cmp(b),
        }
    }
}

impl PartialOrd for PreRelease {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Version {
    /// Semantic version precedence: a release comes after its
    /// pre-releases; pre-releases compare identifier by identifier, a
    /// shorter prefix first.
    fn cmp(&self, other: &Self) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => self.pre.cmp(&other.pre),
            })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Parses a version as Masterminds' `NewVersion` does: an optional `v`,
/// then major, optional minor and patch (0 when absent), an optional
/// pre-release and build metadata. With `full`, minor and patch are
/// required (the versions of constraints, which this subset keeps exact).
fn parse(text: &str, full: bool) -> Result<Version, EvalError> {
    let bad = || EvalError::new(format!("invalid semantic version {text:?}"));
    let s = text.strip_prefix('v').unwrap_or(text);
    let s = s
        .split_once('+')
        .map_or(s, |(v, build)| if build.is_empty() { "" } else { v });
    let (core, pre) = match s.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (s, None),
    };
    let numbers: Vec<&str> = core.split('.').collect();
    if numbers.len() > 3 || (full && numbers.len() != 3) {
        return Err(bad());
    }
    let number = |i: usize| -> Result<u64, EvalError> {
        match numbers.get(i) {
            None => Ok(0),
            Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                n.parse().map_err(|_| bad())
            }
            Some(_) => Err(bad()),
        }
    };
    let pre = match pre {
        None => Vec::new(),
        Some(pre) => pre
            .split('.')
            .map(|id| {
                if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
                    Err(bad())
                } else if id.bytes().all(|b| b.is_ascii_digit()) {
                    id.parse().map(PreRelease::Numeric).map_err(|_| bad())
                } else {
                    Ok(PreRelease::Alphanumeric(id.to_string()))
                }
            })
            .collect::<Result<_, _>>()?,
    };
    Ok(Version {
        major: number(0)?,
        minor: number(1)?,
        patch: number(2)?,
        pre,
    })
}

/// Whether `version` satisfies `constraint`: one of `=`, `!=`, `<`, `<=`,
/// `>`, `>=` (or none, meaning `=`) and a full version. Ranges, wildcards,
/// partial versions, `~` and `^` are refused: no class patch uses them,
/// and their rules in Masterminds are subtle enough to want a test of
/// their own before a patch relies on them.
pub(crate) fn satisfies(constraint: &str, version: &str) -> Result<bool, EvalError> {
    let c = constraint.trim();
    let unsupported = || {
        EvalError::new(format!(
            "semverCompare constraint {constraint:?} is not supported by this evaluator"
        ))
    };
    if c.contains(['|', ',', ' ', '~', '^', '*', 'x', 'X']) {
        return Err(unsupported());
    }
    let (op, bound) = ["!=", "<=", "=<", ">=", "=>", "<", ">", "="]
        .into_iter()
        .find_map(|op| c.strip_prefix(op).map(|rest| (op, rest)))
        .unwrap_or(("=", c));
    let bound = parse(bound, true).map_err(|_| unsupported())?;
    let v = parse(version, false)?;
    // A pre-release only matches an ordering constraint on a pre-release.
    let ordering = !matches!(op, "=" | "!=");
    if ordering && !v.pre.is_empty() && bound.pre.is_empty() {
        return Ok(false);
    }
    let order = v.cmp(&bound);
    Ok(match op {
        "=" => order == Ordering::Equal,
        "!=" => order != Ordering::Equal,
        "<" => order == Ordering::Less,
        "<=" | "=<" => order != Ordering::Greater,
        ">" => order == Ordering::Greater,
        _ => order != Ordering::Less,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The class's constraint, `<1.33.0`, on the versions a cluster can
    /// have; the Go driver's string comparison got the last two wrong.
    #[test]
    fn less_than_1_33_by_precedence() {
        for (version, want) in [
            ("v1.31.1", true),
            ("v1.32.9", true),
            ("1.32.0", true),
            ("v1.33.0", false),
            ("v1.33.2", false),
            ("v1.34.0", false),
            ("v1.33.0+k3s1", false),
            ("v1.32.1+build", true),
            ("v1.4.0", true),
            ("v1.100.0", false),
            ("v2.0.0", false),
        ] {
            assert_eq!(satisfies("<1.33.0", version), Ok(want), "{version}");
        }
    }

    #[test]
    fn pre_releases_match_only_constraints_on_pre_releases() {
        assert_eq!(satisfies("<1.33.0", "v1.32.0-rc.1"), Ok(false));
        assert_eq!(satisfies("<1.33.0-rc.2", "v1.33.0-rc.1"), Ok(true));
        assert_eq!(satisfies("<1.33.0-rc.2", "v1.33.0-rc.10"), Ok(false));
        assert_eq!(satisfies(">=1.33.0-alpha", "v1.33.0-beta.1"), Ok(true));
        assert_eq!(satisfies(">=1.33.0-alpha.1", "v1.33.0-alpha"), Ok(false));
        assert_eq!(satisfies("<1.33.0-alpha", "v1.33.0-1"), Ok(true));
    }

    #[test]
    fn every_comparison() {
        for (constraint, want) in [
            ("1.33.0", false),
            ("=1.32.5", true),
            ("!=1.32.5", false),
            ("<=1.32.5", true),
            ("=<1.32.4", false),
            (">1.32.4", true),
            (">=1.32.6", false),
            ("=>1.32.5", true),
            (" <1.33.0 ", true),
        ] {
            assert_eq!(satisfies(constraint, "v1.32.5"), Ok(want), "{constraint}");
        }
    }

    #[test]
    fn what_is_not_supported_or_not_a_version_is_an_error() {
        for constraint in [
            "<1.33",
            "~1.32.0",
            "^1.32.0",
            "1.32.x",
            ">=1.30.0, <1.33.0",
            "<1.30.0 || >1.31.0",
            "<one",
        ] {
            assert!(satisfies(constraint, "v1.32.0").is_err(), "{constraint}");
        }
        for version in ["", "latest", "v1.2.3.4", "v1..3", "v1.2.3-"] {
            assert!(satisfies("<1.33.0", version).is_err(), "{version}");
        }
    }
}
