//! Python's `repr()` of the cryptography `Extension` objects a refusal can
//! carry: Magnum's `CertificateValidationError` message embeds it
//! (`Extension '<repr>' not allowed`).

use std::net::{Ipv4Addr, Ipv6Addr};

use python_semantics::python::bytes_repr;

use crate::der::{self, Class, Oid, Tlv};
use crate::oids;
use crate::sign::Requested;

/// `repr(ObjectIdentifier)`.
pub(crate) fn oid_repr(oid: &Oid<'_>) -> String {
    format!(
        "<ObjectIdentifier(oid={oid}, name={})>",
        oids::display_name(oid)
    )
}

fn py_bool(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

/// `repr(x509.Extension)`.
pub(crate) fn extension_repr(re: &Requested) -> String {
    format!(
        "<Extension(oid={}, critical={}, value={})>",
        oid_repr(&re.oid()),
        py_bool(re.critical),
        value_repr(re)
    )
}

/// Python's `repr()` of an ASCII `str` (IA5String values); other bytes are
/// escaped as `\xNN`.
fn str_repr(b: &[u8]) -> String {
    let mut r = bytes_repr(b);
    r.remove(0);
    r
}

fn value_repr(re: &Requested) -> String {
    let oid = re.oid();
    let unrecognized = || {
        format!(
            "<UnrecognizedExtension(oid={}, value={})>",
            oid_repr(&oid),
            bytes_repr(&re.value)
        )
    };
    if oids::extension_name(&oid).is_none() {
        return unrecognized();
    }
    let known = |c: &str| oids::is(&oid, c);
    let repr = if known(oids::KEY_USAGE) {
        Some(key_usage_repr(&re.key_usage))
    } else if known(oids::BASIC_CONSTRAINTS) {
        let pl = re
            .bc_path_len
            .map_or_else(|| "None".to_owned(), |n| n.to_string());
        Some(format!(
            "<BasicConstraints(ca={}, path_length={pl})>",
            py_bool(re.bc_ca)
        ))
    } else if known(oids::EXTENDED_KEY_USAGE) {
        oid_list(&re.value).map(|l| format!("<ExtendedKeyUsage([{l}])>"))
    } else if known(oids::SUBJECT_KEY_IDENTIFIER) {
        der::read_one(&re.value)
            .and_then(|t| der::octet_string(&t))
            .ok()
            .map(|id| format!("<SubjectKeyIdentifier(digest={})>", bytes_repr(id)))
    } else if known(oids::OCSP_NO_CHECK) {
        Some("<OCSPNoCheck()>".to_owned())
    } else if known(oids::INHIBIT_ANY_POLICY) {
        der::read_one(&re.value)
            .and_then(|t| der::unsigned(&t))
            .ok()
            .map(|n| format!("<InhibitAnyPolicy(skip_certs={n})>"))
    } else if known(oids::SUBJECT_ALT_NAME) || known(oids::ISSUER_ALT_NAME) {
        let class = if known(oids::SUBJECT_ALT_NAME) {
            "SubjectAlternativeName"
        } else {
            "IssuerAlternativeName"
        };
        der::read_sequence(&re.value)
            .ok()
            .and_then(|names| general_name_list(&names, false))
            .map(|g| format!("<{class}(<GeneralNames([{g}])>)>"))
    } else if known(oids::AUTHORITY_INFO_ACCESS) {
        access_descriptions_repr(&re.value).map(|r| format!("<AuthorityInformationAccess([{r}])>"))
    } else if known(oids::CRL_DISTRIBUTION_POINTS) {
        crl_distribution_points_repr(&re.value).map(|r| format!("<CRLDistributionPoints([{r}])>"))
    } else if known(oids::CERTIFICATE_POLICIES) {
        certificate_policies_repr(&re.value).map(|r| format!("<CertificatePolicies([{r}])>"))
    } else if known(oids::NAME_CONSTRAINTS) {
        name_constraints_repr(&re.value)
    } else if known(oids::AUTHORITY_KEY_IDENTIFIER) {
        authority_key_identifier_repr(&re.value)
    } else {
        None
    };
    // Deviation: the reprs of the remaining forms (policy qualifiers,
    // relative names, reasons, directory names, other extension types) are
    // not reproduced; the raw value is shown instead.
    repr.unwrap_or_else(unrecognized)
}

fn key_usage_repr(bits: &[bool; 9]) -> String {
    const NAMES: [&str; 9] = [
        "digital_signature",
        "content_commitment",
        "key_encipherment",
        "data_encipherment",
        "key_agreement",
        "key_cert_sign",
        "crl_sign",
        "encipher_only",
        "decipher_only",
    ];
    let parts: Vec<String> = NAMES
        .iter()
        .enumerate()
        .map(|(i, n)| {
            // cryptography shows encipher_only and decipher_only as False
            // when key_agreement is not set (reading them would raise).
            let v = bits[i]
                && (i < crate::sign::BIT_ENCIPHER_ONLY || bits[crate::sign::BIT_KEY_AGREEMENT]);
            format!("{n}={}", py_bool(v))
        })
        .collect();
    format!("<KeyUsage({})>", parts.join(", "))
}

fn oid_list(value: &[u8]) -> Option<String> {
    let items = der::read_sequence(value).ok()?;
    let parts: Option<Vec<String>> = items
        .iter()
        .map(|t| der::oid(t).ok().map(|o| oid_repr(&o)))
        .collect();
    Some(parts?.join(", "))
}

/// A DNS, email, URI or IP GeneralName; `None` for any other kind. Inside
/// name constraints an IP entry is a network.
fn general_name_repr(n: &Tlv<'_>, network: bool) -> Option<String> {
    if n.class != Class::ContextSpecific || n.constructed {
        return None;
    }
    let b = n.content;
    match n.number {
        1 => Some(format!("<RFC822Name(value={})>", str_repr(b))),
        2 => Some(format!("<DNSName(value={})>", str_repr(b))),
        6 => Some(format!(
            "<UniformResourceIdentifier(value={})>",
            str_repr(b)
        )),
        7 if network => {
            if b.len() != 8 && b.len() != 32 {
                return None;
            }
            let (addr, mask) = b.split_at(b.len() / 2);
            let ones = prefix_len(mask)?;
            if addr.iter().zip(mask).any(|(a, m)| a & !m != 0) {
                return None;
            }
            Some(format!("<IPAddress(value={}/{ones})>", ip_text(addr)?))
        }
        7 => Some(format!("<IPAddress(value={})>", ip_text(b)?)),
        _ => None,
    }
}

/// The prefix length of a CIDR mask, `None` when the mask is not one.
fn prefix_len(mask: &[u8]) -> Option<u32> {
    let ones: u32 = mask.iter().map(|b| b.leading_ones()).sum();
    let canonical = mask.iter().enumerate().all(|(i, b)| {
        let want = ones.saturating_sub(8 * i as u32).min(8);
        *b == (0xffu16 << (8 - want)) as u8
    });
    canonical.then_some(ones)
}

fn ip_text(b: &[u8]) -> Option<String> {
    match b.len() {
        4 => Some(Ipv4Addr::new(b[0], b[1], b[2], b[3]).to_string()),
        16 => {
            let mut a = [0u8; 16];
            a.copy_from_slice(b);
            Some(Ipv6Addr::from(a).to_string())
        }
        _ => None,
    }
}

fn general_name_list(names: &[Tlv<'_>], network: bool) -> Option<String> {
    let parts: Option<Vec<String>> = names
        .iter()
        .map(|n| general_name_repr(n, network))
        .collect();
    Some(parts?.join(", "))
}

fn access_descriptions_repr(value: &[u8]) -> Option<String> {
    let ads = der::read_sequence(value).ok()?;
    let mut parts = Vec::with_capacity(ads.len());
    for ad in &ads {
        let fields = der::sequence_of(ad).ok()?;
        let [method, location] = fields.as_slice() else {
            return None;
        };
        let method = der::oid(method).ok()?;
        let location = general_name_repr(location, false)?;
        parts.push(format!(
            "<AccessDescription(access_method={}, access_location={location})>",
            oid_repr(&method)
        ));
    }
    Some(parts.join(", "))
}

fn crl_distribution_points_repr(value: &[u8]) -> Option<String> {
    let dps = der::read_sequence(value).ok()?;
    let mut parts = Vec::with_capacity(dps.len());
    for dp in &dps {
        // Only a distributionPoint [0] holding a fullName [0].
        let inner = der::sequence_of(dp).ok()?;
        let [point] = inner.as_slice() else {
            return None;
        };
        if !point.is_context(0, true) {
            return None;
        }
        let choice = point.children().ok()?;
        let [full_name] = choice.as_slice() else {
            return None;
        };
        if !full_name.is_context(0, true) {
            return None;
        }
        let list = general_name_list(&full_name.children().ok()?, false)?;
        parts.push(format!(
            "<DistributionPoint(full_name=[{list}], relative_name=None, reasons=None, crl_issuer=None)>"
        ));
    }
    Some(parts.join(", "))
}

fn certificate_policies_repr(value: &[u8]) -> Option<String> {
    let pols = der::read_sequence(value).ok()?;
    let mut parts = Vec::with_capacity(pols.len());
    for p in &pols {
        let fields = der::sequence_of(p).ok()?;
        // Policies with qualifiers are not reproduced.
        let [id] = fields.as_slice() else {
            return None;
        };
        parts.push(format!(
            "<PolicyInformation(policy_identifier={}, policy_qualifiers=None)>",
            oid_repr(&der::oid(id).ok()?)
        ));
    }
    Some(parts.join(", "))
}

fn name_constraints_repr(value: &[u8]) -> Option<String> {
    let fields = der::read_sequence(value).ok()?;
    let mut subtrees = ["None".to_owned(), "None".to_owned()];
    for f in &fields {
        if f.class != Class::ContextSpecific || !f.constructed || f.number > 1 {
            return None;
        }
        let mut bases = Vec::new();
        for tree in f.children().ok()? {
            let el = der::sequence_of(&tree).ok()?;
            let [base] = el.as_slice() else {
                return None;
            };
            bases.push(*base);
        }
        subtrees[f.number as usize] = format!("[{}]", general_name_list(&bases, true)?);
    }
    Some(format!(
        "<NameConstraints(permitted_subtrees={}, excluded_subtrees={})>",
        subtrees[0], subtrees[1]
    ))
}

fn authority_key_identifier_repr(value: &[u8]) -> Option<String> {
    let fields = der::read_sequence(value).ok()?;
    let id = match fields.as_slice() {
        [] => "None".to_owned(),
        [id] if id.is_context(0, false) => bytes_repr(id.content),
        // An issuer and serial number are not reproduced.
        _ => return None,
    };
    Some(format!(
        "<AuthorityKeyIdentifier(key_identifier={id}, authority_cert_issuer=None, authority_cert_serial_number=None)>"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidr_masks() {
        assert_eq!(prefix_len(&[255, 0, 0, 0]), Some(8));
        assert_eq!(prefix_len(&[255, 255, 255, 255]), Some(32));
        assert_eq!(prefix_len(&[0, 0, 0, 0]), Some(0));
        assert_eq!(prefix_len(&[255, 128, 0, 0]), Some(9));
        assert_eq!(prefix_len(&[255, 0, 255, 0]), None);
        assert_eq!(prefix_len(&[254, 255, 0, 0]), None);
    }

    #[test]
    fn ip_text_is_pythons() {
        assert_eq!(ip_text(&[10, 0, 0, 1]).unwrap(), "10.0.0.1");
        let mut v6 = [0u8; 16];
        v6[15] = 1;
        assert_eq!(ip_text(&v6).unwrap(), "::1");
        assert!(ip_text(&[1, 2, 3]).is_none());
    }
}
