//! The bodies of the fuzz targets (`fuzz/fuzz_targets/ini.rs`,
//! `fuzz/fuzz_targets/database_url.rs`), kept here so that the seed corpora
//! also run as ordinary tests through the same code. Each panics when an
//! invariant breaks; otherwise it must never panic.

use std::sync::Arc;

use crate::config::Config;
use crate::database::DatabaseUrl;
use crate::schema::{Opt, Schema};
use crate::types::OptType;
use crate::{ini, python};

/// Options of every type, with substituting defaults, deprecated names in
/// the same and another group, a secret and an ignored option: the shapes of
/// Magnum's table.
fn schema() -> Schema {
    let strings = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let opts = [
        Opt::new("DEFAULT", "debug", OptType::Boolean).default("false"),
        Opt::new("DEFAULT", "host", OptType::HostAddress),
        Opt::new("DEFAULT", "pybasedir", OptType::string())
            .default("/usr/lib/magnum")
            .unchecked(),
        Opt::new("DEFAULT", "state_path", OptType::string())
            .default("$pybasedir")
            .unchecked(),
        Opt::new("DEFAULT", "log_file", OptType::string()).deprecated_name("logfile"),
        Opt::new("DEFAULT", "transport_url", OptType::string())
            .default("rabbit://")
            .secret(),
        Opt::new("api", "port", OptType::Port).default("9511"),
        Opt::new("api", "host", OptType::IpAddress).default("127.0.0.1"),
        Opt::new("api", "max_limit", OptType::integer()).default("1000"),
        Opt::new(
            "api",
            "workers",
            OptType::Integer {
                min: Some(1),
                max: Some(64),
            },
        ),
        Opt::new("api", "enabled_ssl", OptType::Boolean).default("false"),
        Opt::new("api", "ssl_cert_file", OptType::string()),
        Opt::new("api", "ssl_key_file", OptType::string()),
        Opt::new("api", "api_paste_config", OptType::string())
            .default("api-paste.ini")
            .ignored("not read"),
        Opt::new("keystone_auth", "password", OptType::string()).secret(),
        Opt::new("keystone_auth", "project_name", OptType::string()).deprecated_name("tenant_name"),
        Opt::new(
            "keystone_auth",
            "auth_url",
            OptType::Uri {
                schemes: strings(&["http", "https"]),
                max_length: Some(200),
            },
        ),
        Opt::new("oslo_policy", "policy_dirs", OptType::MultiString).default("policy.d"),
        Opt::new(
            "oslo_policy",
            "remote_timeout",
            OptType::Float {
                min: Some(0.0),
                max: None,
            },
        )
        .default("60"),
        Opt::new(
            "oslo_messaging_notifications",
            "driver",
            OptType::MultiString,
        )
        .default("")
        .deprecated_in("DEFAULT", "notification_driver"),
        Opt::new(
            "x509",
            "allowed_extensions",
            OptType::List {
                choices: strings(&["keyUsage", "subjectAltName"]),
            },
        )
        .default("keyUsage"),
        Opt::new("drivers", "enabled_beta_drivers", OptType::list()).default(""),
        Opt::new(
            "DEFAULT",
            "auth_strategy",
            OptType::String {
                choices: strings(&["keystone", "noauth"]),
            },
        )
        .default("keystone"),
        Opt::new("oracle", "dict", OptType::Dict).default("a:1,b:2"),
        Opt::new("oracle", "secret_dict", OptType::Dict).secret(),
        Opt::new(
            "oracle",
            "secret_int",
            OptType::Integer {
                min: Some(0),
                max: Some(5),
            },
        )
        .secret(),
    ];
    let mut s = Schema::new();
    for o in opts {
        // The table above has no duplicates; a duplicate would only make the
        // target's schema smaller.
        let _ = s.register(o);
    }
    s
}

/// Static text of every message, so that a secret made of it is not taken
/// for a leak.
const VOCABULARY: &str = "fuzz.conf invalid value for template substitution error in a secret value \
    (write $$ for a literal $) no such option in group no such group recursive reference value longer \
    than bytes after substitution is not an integer is less than the minimum is greater than the \
    maximum is not a number is not a boolean (true/false, yes/no, on/off, 1/0) is not one of: item an \
    item is not a list of key:value pairs has an empty key has the key twice a key is not an IPv4 or \
    IPv6 address is not a valid IP address or host name is not a URI with a scheme and a host has a \
    scheme other than is longer than characters outside the 64-bit integer range the value bad \
    default: DEFAULT api keystone_auth oslo_policy oslo_messaging_notifications x509 drivers oracle \
    debug host pybasedir state_path log_file transport_url port max_limit workers enabled_ssl \
    ssl_cert_file ssl_key_file api_paste_config password project_name auth_url policy_dirs \
    remote_timeout driver allowed_extensions enabled_beta_drivers auth_strategy dict secret_dict \
    secret_int keystone noauth keyUsage subjectAltName http https 9511 127.0.0.1 1000 rabbit:// \
    /usr/lib/magnum policy.d 60 a:1,b:2 ****";

/// The INI reader and option loading (Go's FuzzParseINI): errors name the
/// file and line on one line; entries obey the parser's invariants; loading
/// never panics, value errors are one line and never show a secret that
/// occurs once in the input; lookups and listings never panic and mask the
/// secret.
pub fn ini(data: &[u8]) {
    let file = match ini::parse("fuzz.conf", data) {
        Ok(f) => f,
        Err(e) => {
            let msg = e.to_string();
            assert!(
                msg.starts_with("fuzz.conf:"),
                "error without location: {msg}"
            );
            assert!(!msg.contains('\n'), "error on several lines: {msg:?}");
            return;
        }
    };
    for e in &file.entries {
        assert!(
            !e.key.is_empty() && e.key == python::strip(&e.key),
            "bad key {:?}",
            e.key
        );
        assert_eq!(
            e.group,
            ini::normalize_group(&e.section),
            "group of section {:?}",
            e.section
        );
        assert!(!e.value.contains('\r') && e.line >= 1, "bad entry {e:?}");
    }
    let text = String::from_utf8_lossy(data);
    let schema = schema();
    let mut vocabulary = VOCABULARY.to_owned();
    for o in schema.opts() {
        vocabulary.push_str(&format!(
            " [{}]/{} {} {:?}",
            o.group,
            o.name,
            o.default.as_deref().unwrap_or(""),
            o.ty
        ));
    }
    let secrets: Vec<String> = file
        .entries
        .iter()
        .filter(|e| {
            let secret = matches!(
                (e.group.as_str(), e.key.as_str()),
                ("keystone_auth", "password")
                    | ("DEFAULT", "transport_url")
                    | ("oracle", "secret_dict" | "secret_int")
            );
            // A secret counts when nothing else can spell it: it occurs
            // once, and one of its characters occurs nowhere else in the
            // input nor in any message's fixed text.
            let rest = text.replacen(e.value.as_str(), "", 1);
            secret
                && e.value.len() >= 6
                && text.matches(e.value.as_str()).count() == 1
                && e.value
                    .chars()
                    .any(|c| !rest.contains(c) && !vocabulary.contains(c))
        })
        .map(|e| e.value.clone())
        .collect();
    let entries = file.entries.clone();
    match Config::from_files(Arc::new(schema), vec![file]) {
        Err(errors) => {
            assert!(!errors.is_empty());
            for e in errors {
                let msg = e.to_string();
                assert!(!msg.contains('\n'), "error on several lines: {msg:?}");
                for s in &secrets {
                    assert!(
                        !msg.contains(s.as_str()),
                        "error {msg:?} shows the secret {s:?}"
                    );
                }
            }
        }
        Ok((config, warnings)) => {
            for w in warnings {
                assert!(w.to_string().starts_with("fuzz.conf:"));
            }
            for e in &entries {
                let _ = config.lookup(&e.group, &e.key);
                let _ = config.lookup_all(&e.section, &e.key);
            }
            for row in config.effective() {
                for s in &secrets {
                    assert!(
                        !row.value.contains(s.as_str()),
                        "{} shows the secret {s:?}",
                        row.key
                    );
                }
            }
            for o in config.schema().opts() {
                if let Some(Err(e)) = config.get(&o.group, &o.name) {
                    let msg = e.to_string();
                    for s in &secrets {
                        assert!(
                            !msg.contains(s.as_str()),
                            "error {msg:?} shows the secret {s:?}"
                        );
                    }
                }
            }
        }
    }
}

/// Static text of the database URL messages.
const DATABASE_VOCABULARY: &str = "invalid database connection URL: [database]/connection is not set \
    not of the form dialect[+driver]://[user[:password]@]host[:port]/database port is not a number \
    between 0 and 65535 connect_timeout is not a positive integer unsupported dialect (want mysql, \
    postgresql or sqlite) database name contains '/' charset is not a charset name ssl_mode is not \
    one of DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY an sqlite URL has no host or \
    credentials (sqlite:///relative.db or sqlite:////absolute.db) sqlite path contains '?' or '#' or \
    starts with file: <unparsable URL>";

/// The SQLAlchemy URL translation (Go's FuzzParseDatabaseURL): never
/// panics, and never shows the password in the redacted URL or an error.
pub fn database_url(data: &[u8]) {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    let result = DatabaseUrl::parse(raw);
    if let Ok(url) = &result {
        let _ = (
            url.sqlx_url(),
            url.host(),
            url.connect_timeout(),
            url.ignored_parameters(),
        );
        assert!(!url.sqlx_url().is_empty());
    }
    let trimmed = raw.trim();
    let Some(pw) = crate::database::raw_password(trimmed) else {
        return;
    };
    // A backslash or a double quote in the password could be forged by a
    // quoted value in a message (`\0` for a NUL, `"0"` around a port): only
    // check passwords without them.
    if pw.len() < 4
        || raw.matches(pw).count() != 1
        || pw.contains(['\\', '"'])
        || DATABASE_VOCABULARY.contains(pw)
    {
        return;
    }
    // The mask itself ("***", next to "://" or '@') must not count as the
    // password: replace it with a character the password lacks.
    let sep = (1u8..=127)
        .map(char::from)
        .find(|c| !pw.contains(*c))
        .unwrap_or('\u{1}');
    let unmask = |s: &str| s.replace("***", &sep.to_string());
    if unmask(&raw.replacen(pw, "", 1)).contains(pw) {
        return;
    }
    match &result {
        // The URL and the reason are checked apart: the text joining them
        // could spell the end of one and the start of the other.
        Err(e) => {
            let (url, reason) = e.parts();
            assert!(
                !url.is_some_and(|u| unmask(u).contains(pw)),
                "error {e} shows the password {pw:?}"
            );
            assert!(!reason.contains(pw), "error {e} shows the password {pw:?}");
        }
        Ok(url) => {
            assert!(
                !unmask(url.redacted()).contains(pw),
                "{} shows the password {pw:?}",
                url.redacted()
            );
            assert!(
                !unmask(&format!("{url:?}")).contains(pw),
                "Debug shows the password {pw:?}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Every seed of the fuzz corpora runs through the targets' code.
    #[test]
    fn seed_corpora() {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
        for (dir, target) in [
            ("seed-ini", super::ini as fn(&[u8])),
            ("seed-database_url", super::database_url),
        ] {
            let dir = corpus.join(dir);
            let entries =
                std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
            let mut n = 0;
            for entry in entries {
                let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
                let data =
                    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                target(&data);
                n += 1;
            }
            assert!(n >= 3, "only {n} seeds in {}", dir.display());
        }
    }

    #[test]
    fn targets_on_tricky_inputs() {
        for input in [
            &b"[keystone_auth]\npassword = hunter2secret\n[api]\nworkers = ${keystone_auth.password}\n"[..],
            b"[oracle]\nsecret_int = 98765432\n",
            b"[oracle]\nsecret_dict = abcdefgh,abcdefgh2:x\n",
            b"[api]\nssl_cert_file = $ssl_key_file\nssl_key_file = $ssl_cert_file\n",
            b"[DEFAULT]\nnotification_driver = a\n[oslo_messaging_notifications]\ndriver = b\n",
            b"\xff\xfe",
            b"[x]\n\r\r\n  k\n",
        ] {
            super::ini(input);
        }
        for input in [
            "mysql://u:secretpw@h/db",
            "mysql://u:p@ss@w0rd@h/db?x=1@2",
            "sqlite://u:pw12@h/x",
            "0://?@:0000@",
        ] {
            super::database_url(input.as_bytes());
        }
    }
}
