//! Typed label readers. A malformed value is a 400 `Invalid` with the
//! message Magnum's Kubernetes drivers use, never a silent default: a
//! driver calls these in `validate_create` so that a bad label is refused
//! before anything is written.
//!
//! ```
//! use openkeel_magnum_driver::Labels;
//! let l = Labels::from([("auto_healing_enabled", "yes"), ("boot_volume_size", "20")]);
//! assert_eq!(l.bool("auto_healing_enabled", false), Ok(true));
//! assert_eq!(l.int("boot_volume_size", 0), Ok(20));
//! assert_eq!(l.int("etcd_volume_size", 10), Ok(10));
//! assert!(l.bool("boot_volume_size", false).is_err());
//! ```

use crate::error::DriverError;
use crate::types::Labels;

/// The spellings of a boolean Python's `strtobool` accepts, in any case.
const TRUE: [&str; 6] = ["true", "t", "yes", "y", "on", "1"];
const FALSE: [&str; 6] = ["false", "f", "no", "n", "off", "0"];

impl Labels {
    /// The value of `key`.
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// The value of `key`, or `default` when it is absent.
    pub fn str_or<'a>(&'a self, key: &str, default: &'a str) -> &'a str {
        self.get_str(key).unwrap_or(default)
    }

    /// The value of `key`, refused when absent or blank: `Label <key> is
    /// required by this driver.`
    pub fn required(&self, key: &str) -> Result<&str, DriverError> {
        match self.get_str(key) {
            Some(v) if !v.trim().is_empty() => Ok(v),
            _ => Err(DriverError::invalid(format!(
                "Label {key} is required by this driver."
            ))),
        }
    }

    /// A boolean label: true/false, yes/no, on/off, 1/0, t/f, y/n in any
    /// case; `default` when absent. Anything else: `Label <key> has an
    /// invalid boolean value "<v>".`
    pub fn bool(&self, key: &str, default: bool) -> Result<bool, DriverError> {
        let Some(v) = self.get_str(key) else {
            return Ok(default);
        };
        let t = v.trim().to_ascii_lowercase();
        if TRUE.contains(&t.as_str()) {
            Ok(true)
        } else if FALSE.contains(&t.as_str()) {
            Ok(false)
        } else {
            Err(DriverError::invalid(format!(
                "Label {key} has an invalid boolean value {v:?}."
            )))
        }
    }

    /// An integer label; `default` when absent or blank. Anything else:
    /// `Label <key> has an invalid integer value "<v>".`
    pub fn int(&self, key: &str, default: i64) -> Result<i64, DriverError> {
        match self.get_str(key) {
            None => Ok(default),
            Some(v) if v.trim().is_empty() => Ok(default),
            Some(v) => v.trim().parse().map_err(|_| {
                DriverError::invalid(format!("Label {key} has an invalid integer value {v:?}."))
            }),
        }
    }

    /// An integer label within `min..=max`; `default` when absent. Out of
    /// range: `Label <key> must be between <min> and <max>, not <n>.`
    pub fn int_in(&self, key: &str, default: i64, min: i64, max: i64) -> Result<i64, DriverError> {
        let n = self.int(key, default)?;
        if n < min || n > max {
            return Err(DriverError::invalid(format!(
                "Label {key} must be between {min} and {max}, not {n}."
            )));
        }
        Ok(n)
    }

    /// One of `allowed`; `default` when absent. Anything else: `Label
    /// <key> has an invalid value "<v>": expected one of a, b.`
    pub fn one_of<'a>(
        &'a self,
        key: &str,
        allowed: &[&'a str],
        default: &'a str,
    ) -> Result<&'a str, DriverError> {
        let Some(v) = self.get_str(key) else {
            return Ok(default);
        };
        match allowed.iter().find(|a| **a == v) {
            Some(a) => Ok(a),
            None => Err(DriverError::invalid(format!(
                "Label {key} has an invalid value {v:?}: expected one of {}.",
                allowed.join(", ")
            ))),
        }
    }

    /// A comma-separated list label, items trimmed, empty items dropped;
    /// empty when absent.
    pub fn list(&self, key: &str) -> Vec<&str> {
        self.get_str(key)
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether a comma-separated list label names `item`.
    pub fn lists(&self, key: &str, item: &str) -> bool {
        self.list(key).contains(&item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invalid(msg: &str) -> DriverError {
        DriverError::client(400, "Invalid", msg)
    }

    #[test]
    fn booleans_are_parsed_strictly() {
        // Go: the capi labels' boolean cases.
        let l = Labels::from([
            ("a", "TRUE"),
            ("b", " off "),
            ("c", "Y"),
            ("d", "0"),
            ("bad", "maybe"),
        ]);
        assert_eq!(l.bool("a", false), Ok(true));
        assert_eq!(l.bool("b", true), Ok(false));
        assert_eq!(l.bool("c", false), Ok(true));
        assert_eq!(l.bool("d", true), Ok(false));
        assert_eq!(l.bool("missing", true), Ok(true));
        assert_eq!(
            l.bool("bad", false),
            Err(invalid("Label bad has an invalid boolean value \"maybe\"."))
        );
    }

    #[test]
    fn integers_are_parsed_strictly() {
        let l = Labels::from([("n", " 42 "), ("blank", " "), ("bad", "4x")]);
        assert_eq!(l.int("n", 0), Ok(42));
        assert_eq!(l.int("blank", 7), Ok(7));
        assert_eq!(l.int("missing", 7), Ok(7));
        assert_eq!(
            l.int("bad", 0),
            Err(invalid("Label bad has an invalid integer value \"4x\"."))
        );
        assert_eq!(
            l.int_in("n", 0, 1, 10),
            Err(invalid("Label n must be between 1 and 10, not 42."))
        );
        assert_eq!(l.int_in("missing", 3, 1, 10), Ok(3));
    }

    #[test]
    fn required_choices_and_lists() {
        let l = Labels::from([("cni", "calico"), ("zones", "a, b,,c "), ("empty", " ")]);
        assert_eq!(l.required("cni"), Ok("calico"));
        assert_eq!(
            l.required("empty"),
            Err(invalid("Label empty is required by this driver."))
        );
        assert_eq!(
            l.one_of("cni", &["calico", "cilium"], "calico"),
            Ok("calico")
        );
        assert_eq!(
            l.one_of("cni", &["flannel"], "flannel"),
            Err(invalid(
                "Label cni has an invalid value \"calico\": expected one of flannel."
            ))
        );
        assert_eq!(l.list("zones"), vec!["a", "b", "c"]);
        assert!(l.lists("zones", "b") && !l.lists("zones", "d"));
        assert!(l.list("missing").is_empty());
        assert_eq!(l.str_or("missing", "x"), "x");
    }
}
