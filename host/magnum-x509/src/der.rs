//! A minimal DER reader and writer for the values this crate looks inside:
//! extension values of a CSR, SubjectPublicKeyInfo, EncryptedPrivateKeyInfo.
//!
//! The reader is strict DER: definite, minimal lengths and tags, as
//! cryptography's parser (the reference reads CSRs with it) requires.

use std::fmt;

/// The class of a tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Universal,
    Application,
    ContextSpecific,
    Private,
}

/// Universal tag numbers used here.
pub mod tag {
    pub const BOOLEAN: u32 = 1;
    pub const INTEGER: u32 = 2;
    pub const BIT_STRING: u32 = 3;
    pub const OCTET_STRING: u32 = 4;
    pub const NULL: u32 = 5;
    pub const OID: u32 = 6;
    pub const SEQUENCE: u32 = 16;
}

/// Why DER could not be read. The reasons name structure only, never
/// content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DerError(pub &'static str);

impl fmt::Display for DerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for DerError {}

/// One element: its tag and content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tlv<'a> {
    pub class: Class,
    pub constructed: bool,
    pub number: u32,
    /// The content octets.
    pub content: &'a [u8],
    /// The whole element, tag and length included.
    pub full: &'a [u8],
}

impl<'a> Tlv<'a> {
    /// Whether the element is the universal type `number` (primitive or
    /// constructed as `constructed`).
    pub fn is_universal(&self, number: u32, constructed: bool) -> bool {
        self.class == Class::Universal && self.number == number && self.constructed == constructed
    }

    /// Whether the element is the context-specific tag `[number]`.
    pub fn is_context(&self, number: u32, constructed: bool) -> bool {
        self.class == Class::ContextSpecific
            && self.number == number
            && self.constructed == constructed
    }

    /// The elements of a constructed element's content.
    pub fn children(&self) -> Result<Vec<Tlv<'a>>, DerError> {
        if !self.constructed {
            return Err(DerError("primitive element has no children"));
        }
        elements(self.content)
    }
}

/// Reads one element from the front of `input`, returning it and the rest.
pub fn read(input: &[u8]) -> Result<(Tlv<'_>, &[u8]), DerError> {
    let (&first, mut rest) = input.split_first().ok_or(DerError("truncated tag"))?;
    let class = match first >> 6 {
        0 => Class::Universal,
        1 => Class::Application,
        2 => Class::ContextSpecific,
        _ => Class::Private,
    };
    let constructed = first & 0x20 != 0;
    let mut number = u32::from(first & 0x1f);
    if number == 0x1f {
        // High tag number form: base 128, minimal, at least 31.
        number = 0;
        let mut started = false;
        loop {
            let (&b, r) = rest.split_first().ok_or(DerError("truncated tag"))?;
            rest = r;
            if !started && b == 0x80 {
                return Err(DerError("non-minimal tag"));
            }
            started = true;
            if number > (u32::MAX >> 7) {
                return Err(DerError("tag number too large"));
            }
            number = (number << 7) | u32::from(b & 0x7f);
            if b & 0x80 == 0 {
                break;
            }
        }
        if number < 0x1f {
            return Err(DerError("non-minimal tag"));
        }
    }
    let (&l0, r) = rest.split_first().ok_or(DerError("truncated length"))?;
    rest = r;
    let len = if l0 < 0x80 {
        usize::from(l0)
    } else if l0 == 0x80 {
        return Err(DerError("indefinite length"));
    } else {
        let n = usize::from(l0 & 0x7f);
        if n > std::mem::size_of::<usize>() || rest.len() < n {
            return Err(DerError("truncated length"));
        }
        let (bytes, r) = rest.split_at(n);
        rest = r;
        if bytes[0] == 0 {
            return Err(DerError("non-minimal length"));
        }
        let len = bytes
            .iter()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        if len < 0x80 {
            return Err(DerError("non-minimal length"));
        }
        len
    };
    if rest.len() < len {
        return Err(DerError("truncated content"));
    }
    let (content, rest) = rest.split_at(len);
    let full = &input[..input.len() - rest.len()];
    Ok((
        Tlv {
            class,
            constructed,
            number,
            content,
            full,
        },
        rest,
    ))
}

/// Reads exactly one element: `input` must hold nothing after it.
pub fn read_one(input: &[u8]) -> Result<Tlv<'_>, DerError> {
    let (tlv, rest) = read(input)?;
    if !rest.is_empty() {
        return Err(DerError("trailing data"));
    }
    Ok(tlv)
}

/// Splits `content` into its elements.
pub fn elements(mut content: &[u8]) -> Result<Vec<Tlv<'_>>, DerError> {
    let mut out = Vec::new();
    while !content.is_empty() {
        let (tlv, rest) = read(content)?;
        out.push(tlv);
        content = rest;
    }
    Ok(out)
}

/// Reads exactly one SEQUENCE and returns its elements.
pub fn read_sequence(input: &[u8]) -> Result<Vec<Tlv<'_>>, DerError> {
    let tlv = read_one(input)?;
    sequence_of(&tlv)
}

/// The elements of `tlv`, which must be a SEQUENCE.
pub fn sequence_of<'a>(tlv: &Tlv<'a>) -> Result<Vec<Tlv<'a>>, DerError> {
    if !tlv.is_universal(tag::SEQUENCE, true) {
        return Err(DerError("not a SEQUENCE"));
    }
    tlv.children()
}

/// A DER BOOLEAN (`0x00` or `0xff` only).
pub fn boolean(tlv: &Tlv<'_>) -> Result<bool, DerError> {
    if !tlv.is_universal(tag::BOOLEAN, false) {
        return Err(DerError("not a BOOLEAN"));
    }
    match tlv.content {
        [0x00] => Ok(false),
        [0xff] => Ok(true),
        _ => Err(DerError("invalid BOOLEAN")),
    }
}

/// A minimally encoded INTEGER that fits an `i128`.
pub fn integer(tlv: &Tlv<'_>) -> Result<i128, DerError> {
    if !tlv.is_universal(tag::INTEGER, false) {
        return Err(DerError("not an INTEGER"));
    }
    let c = tlv.content;
    if c.is_empty() {
        return Err(DerError("empty INTEGER"));
    }
    if c.len() > 1 && ((c[0] == 0 && c[1] & 0x80 == 0) || (c[0] == 0xff && c[1] & 0x80 != 0)) {
        return Err(DerError("non-minimal INTEGER"));
    }
    if c.len() > 16 {
        return Err(DerError("INTEGER too large"));
    }
    let mut v: i128 = if c[0] & 0x80 != 0 { -1 } else { 0 };
    for &b in c {
        v = (v << 8) | i128::from(b);
    }
    Ok(v)
}

/// A non-negative INTEGER that fits a `u64`.
pub fn unsigned(tlv: &Tlv<'_>) -> Result<u64, DerError> {
    let v = integer(tlv)?;
    u64::try_from(v).map_err(|_| DerError("INTEGER out of range"))
}

/// A BIT STRING: its bytes and the number of unused bits (which must be
/// zero bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitString<'a> {
    pub bytes: &'a [u8],
    pub unused: u8,
}

impl BitString<'_> {
    /// Bit `i` (0 = the most significant bit of the first byte); bits past
    /// the end are clear.
    pub fn bit(&self, i: usize) -> bool {
        let len = self.bytes.len() * 8 - usize::from(self.unused);
        i < len && self.bytes[i / 8] & (0x80 >> (i % 8)) != 0
    }
}

/// A primitive BIT STRING with zero padding bits.
pub fn bit_string<'a>(tlv: &Tlv<'a>) -> Result<BitString<'a>, DerError> {
    if !tlv.is_universal(tag::BIT_STRING, false) {
        return Err(DerError("not a BIT STRING"));
    }
    let (&unused, bytes) = tlv
        .content
        .split_first()
        .ok_or(DerError("empty BIT STRING"))?;
    if unused > 7 || (bytes.is_empty() && unused > 0) {
        return Err(DerError("invalid BIT STRING padding"));
    }
    if let Some(&last) = bytes.last()
        && last & ((1u8 << unused) - 1) != 0
    {
        return Err(DerError("invalid BIT STRING padding"));
    }
    Ok(BitString { bytes, unused })
}

/// A primitive OCTET STRING.
pub fn octet_string<'a>(tlv: &Tlv<'a>) -> Result<&'a [u8], DerError> {
    if !tlv.is_universal(tag::OCTET_STRING, false) {
        return Err(DerError("not an OCTET STRING"));
    }
    Ok(tlv.content)
}

/// An OBJECT IDENTIFIER: its content octets, checked to be well formed.
pub fn oid<'a>(tlv: &Tlv<'a>) -> Result<Oid<'a>, DerError> {
    if !tlv.is_universal(tag::OID, false) {
        return Err(DerError("not an OBJECT IDENTIFIER"));
    }
    Oid::from_content(tlv.content)
}

/// NULL.
pub fn null(tlv: &Tlv<'_>) -> Result<(), DerError> {
    if !tlv.is_universal(tag::NULL, false) || !tlv.content.is_empty() {
        return Err(DerError("not NULL"));
    }
    Ok(())
}

/// An object identifier as its DER content octets; every arc fits a `u64`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Oid<'a>(&'a [u8]);

impl<'a> Oid<'a> {
    /// Checks `content` (the octets after tag and length).
    pub fn from_content(content: &'a [u8]) -> Result<Self, DerError> {
        if content.is_empty() {
            return Err(DerError("empty OBJECT IDENTIFIER"));
        }
        let mut arc: u64 = 0;
        let mut start = true;
        for &b in content {
            if start && b == 0x80 {
                return Err(DerError("non-minimal OBJECT IDENTIFIER arc"));
            }
            if arc > (u64::MAX >> 7) {
                return Err(DerError("OBJECT IDENTIFIER arc too large"));
            }
            arc = (arc << 7) | u64::from(b & 0x7f);
            start = b & 0x80 == 0;
            if start {
                arc = 0;
            }
        }
        if !start {
            return Err(DerError("truncated OBJECT IDENTIFIER"));
        }
        Ok(Oid(content))
    }

    /// Content octets already checked by [`Oid::from_content`].
    pub(crate) fn trusted(content: &'a [u8]) -> Self {
        Oid(content)
    }

    /// The content octets.
    pub fn content(&self) -> &'a [u8] {
        self.0
    }

    /// The arcs.
    pub fn arcs(&self) -> Vec<u64> {
        let mut out = Vec::new();
        let mut arc: u64 = 0;
        for &b in self.0 {
            arc = (arc << 7) | u64::from(b & 0x7f);
            if b & 0x80 == 0 {
                if out.is_empty() {
                    // The first subidentifier holds the first two arcs.
                    let first = (arc / 40).min(2);
                    out.push(first);
                    out.push(arc - first * 40);
                } else {
                    out.push(arc);
                }
                arc = 0;
            }
        }
        out
    }
}

impl fmt::Display for Oid<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, a) in self.arcs().iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "{a}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Oid<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Oid({self})")
    }
}

/// Encodes the content octets of a dotted object identifier; `None` when
/// the text is not one.
pub fn encode_oid_content(dotted: &str) -> Option<Vec<u8>> {
    let arcs: Vec<u64> = dotted
        .split('.')
        .map(|a| a.parse::<u64>().ok())
        .collect::<Option<_>>()?;
    if arcs.len() < 2 || arcs[0] > 2 || (arcs[0] < 2 && arcs[1] >= 40) {
        return None;
    }
    let mut out = Vec::new();
    let first = arcs[0].checked_mul(40)?.checked_add(arcs[1])?;
    for arc in std::iter::once(first).chain(arcs[2..].iter().copied()) {
        let mut groups = vec![(arc & 0x7f) as u8];
        let mut v = arc >> 7;
        while v > 0 {
            groups.push((v & 0x7f) as u8 | 0x80);
            v >>= 7;
        }
        out.extend(groups.iter().rev());
    }
    Some(out)
}

// ---------------------------------------------------------------- writer

/// Encodes one element with a single-byte tag and a minimal length.
pub fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(content.len() + 6);
    out.push(tag);
    let n = content.len();
    if n < 0x80 {
        out.push(n as u8);
    } else {
        let bytes = n.to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(content);
    out
}

/// A SEQUENCE of already encoded elements.
pub fn sequence(parts: &[&[u8]]) -> Vec<u8> {
    tlv(0x30, &parts.concat())
}

/// A SET of already encoded elements, in the given order.
#[cfg(test)]
pub fn set(parts: &[&[u8]]) -> Vec<u8> {
    tlv(0x31, &parts.concat())
}

/// An OCTET STRING.
pub fn octets(b: &[u8]) -> Vec<u8> {
    tlv(0x04, b)
}

/// NULL.
pub fn null_value() -> Vec<u8> {
    vec![0x05, 0x00]
}

/// BOOLEAN TRUE.
pub fn true_value() -> Vec<u8> {
    vec![0x01, 0x01, 0xff]
}

/// A minimal INTEGER.
#[cfg(test)]
pub fn int(v: i64) -> Vec<u8> {
    let bytes = v.to_be_bytes();
    let mut start = 0;
    while start < 7 {
        let (b, next) = (bytes[start], bytes[start + 1]);
        if (b == 0 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    tlv(0x02, &bytes[start..])
}

/// A minimal non-negative INTEGER.
pub fn uint(v: u64) -> Vec<u8> {
    let bytes = v.to_be_bytes();
    let skip = bytes.iter().take_while(|b| **b == 0).count().min(7);
    let mut c = Vec::with_capacity(9);
    if bytes[skip] & 0x80 != 0 {
        c.push(0);
    }
    c.extend_from_slice(&bytes[skip..]);
    tlv(0x02, &c)
}

/// An OBJECT IDENTIFIER from its dotted form.
///
/// # Panics
/// When `dotted` is not an object identifier: only constants reach here.
pub fn oid_value(dotted: &str) -> Vec<u8> {
    match encode_oid_content(dotted) {
        Some(c) => tlv(0x06, &c),
        None => panic!("invalid object identifier constant {dotted}"),
    }
}

/// A BIT STRING of whole bytes.
#[cfg(test)]
pub fn bits(b: &[u8]) -> Vec<u8> {
    let mut c = Vec::with_capacity(b.len() + 1);
    c.push(0);
    c.extend_from_slice(b);
    tlv(0x03, &c)
}

/// A NamedBitList BIT STRING (bit 0 = the most significant bit of the first
/// byte) with trailing zero bits removed, as DER requires.
pub fn named_bits(set: &[bool]) -> Vec<u8> {
    let Some(last) = set.iter().rposition(|b| *b) else {
        return tlv(0x03, &[0]);
    };
    let nbytes = last / 8 + 1;
    let mut content = vec![0u8; nbytes + 1];
    for (i, _) in set.iter().enumerate().take(last + 1).filter(|(_, b)| **b) {
        content[1 + i / 8] |= 0x80 >> (i % 8);
    }
    content[0] = (nbytes * 8 - (last + 1)) as u8;
    tlv(0x03, &content)
}

/// A UTF8String.
#[cfg(test)]
pub fn utf8(s: &str) -> Vec<u8> {
    tlv(0x0c, s.as_bytes())
}

/// A Name whose attributes are each their own RDN with UTF8String values
/// (cryptography's encoding of `x509.Name([...])`).
#[cfg(test)]
pub fn name(attrs: &[(&str, &str)]) -> Vec<u8> {
    let rdns: Vec<Vec<u8>> = attrs
        .iter()
        .map(|(oid, v)| set(&[&sequence(&[&oid_value(oid), &utf8(v)])]))
        .collect();
    let parts: Vec<&[u8]> = rdns.iter().map(Vec::as_slice).collect();
    sequence(&parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_are_minimal_both_ways() {
        let long = vec![7u8; 300];
        let enc = tlv(0x04, &long);
        assert_eq!(&enc[..4], &[0x04, 0x82, 0x01, 0x2c]);
        let t = read_one(&enc).unwrap();
        assert_eq!(t.content, &long[..]);
        // 0x81 0x05 is a non-minimal length; 0x80 is indefinite.
        assert_eq!(
            read(&[0x04, 0x81, 0x05, 1, 2, 3, 4, 5]).unwrap_err().0,
            "non-minimal length"
        );
        assert_eq!(
            read(&[0x30, 0x80, 0, 0]).unwrap_err().0,
            "indefinite length"
        );
        assert_eq!(
            read(&[0x04, 0x82, 0x00, 0x90]).unwrap_err().0,
            "non-minimal length"
        );
        assert_eq!(read(&[0x04, 0x03, 1]).unwrap_err().0, "truncated content");
        assert_eq!(
            read_one(&[0x05, 0x00, 0x00]).unwrap_err().0,
            "trailing data"
        );
    }

    #[test]
    fn high_tag_numbers() {
        let (t, _) = read(&[0x9f, 0x21, 0x00]).unwrap();
        assert_eq!((t.class, t.number), (Class::ContextSpecific, 0x21));
        assert!(
            read(&[0x9f, 0x1e, 0x00]).is_err(),
            "a low number in the long form"
        );
        assert!(read(&[0x9f, 0x80, 0x21, 0x00]).is_err(), "a leading 0x80");
    }

    #[test]
    fn integers_and_booleans() {
        for v in [
            0i64,
            1,
            127,
            128,
            255,
            256,
            -1,
            -128,
            -129,
            i64::MAX,
            i64::MIN,
        ] {
            assert_eq!(
                integer(&read_one(&int(v)).unwrap()).unwrap(),
                i128::from(v),
                "{v}"
            );
        }
        for v in [0u64, 127, 128, 255, 256, u64::MAX] {
            assert_eq!(unsigned(&read_one(&uint(v)).unwrap()).unwrap(), v, "{v}");
        }
        assert_eq!(uint(0), vec![0x02, 0x01, 0x00]);
        assert!(integer(&read_one(&[0x02, 0x02, 0x00, 0x01]).unwrap()).is_err());
        assert!(integer(&read_one(&[0x02, 0x02, 0xff, 0x80]).unwrap()).is_err());
        assert!(integer(&read_one(&[0x02, 0x00]).unwrap()).is_err());
        assert!(unsigned(&read_one(&int(-1)).unwrap()).is_err());
        assert!(boolean(&read_one(&[0x01, 0x01, 0x01]).unwrap()).is_err());
        assert!(boolean(&read_one(&true_value()).unwrap()).unwrap());
    }

    #[test]
    fn bit_strings() {
        assert_eq!(named_bits(&[true]), vec![0x03, 0x02, 0x07, 0x80]);
        assert_eq!(named_bits(&[false; 9]), vec![0x03, 0x01, 0x00]);
        let ku = named_bits(&[true, false, true, false, false, false, false, false, true]);
        assert_eq!(ku, vec![0x03, 0x03, 0x07, 0xa0, 0x80]);
        let b = bit_string(&read_one(&ku).unwrap()).unwrap();
        assert!(b.bit(0) && !b.bit(1) && b.bit(2) && b.bit(8) && !b.bit(9) && !b.bit(100));
        // Padding bits must be zero.
        assert!(bit_string(&read_one(&[0x03, 0x02, 0x07, 0x81]).unwrap()).is_err());
        assert!(bit_string(&read_one(&[0x03, 0x01, 0x01]).unwrap()).is_err());
        assert!(bit_string(&read_one(&[0x03, 0x00]).unwrap()).is_err());
    }

    #[test]
    fn object_identifiers() {
        for s in [
            "2.5.29.15",
            "1.2.840.113549.1.1.11",
            "1.3.6.1.4.1.99999.1",
            "2.999.3",
            "0.0",
        ] {
            let enc = oid_value(s);
            let o = oid(&read_one(&enc).unwrap()).unwrap();
            assert_eq!(o.to_string(), s);
        }
        assert!(Oid::from_content(&[0x2a, 0x80, 0x01]).is_err());
        assert!(Oid::from_content(&[0x2a, 0x86]).is_err());
        assert!(Oid::from_content(&[]).is_err());
        assert!(encode_oid_content("3.1").is_none());
        assert!(encode_oid_content("1.40").is_none());
        assert!(encode_oid_content("1").is_none());
    }
}
