//! PEM blocks, found the way the reference's readers find them: a block
//! starts with `-----BEGIN <label>-----` at the start of a line, may carry
//! `Key: value` headers, ends with the matching `-----END <label>-----`, and
//! a block that does not decode is skipped.

use base64::Engine;
use base64::engine::{GeneralPurpose, GeneralPurposeConfig};

/// Standard base64 with padding; trailing bits need not be zero.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true),
);

/// One decoded block.
pub struct Block<'a> {
    pub label: &'a [u8],
    pub der: Vec<u8>,
}

/// The first block of `data` that decodes and whose label `accept` takes.
pub fn find<'a>(data: &'a [u8], accept: impl Fn(&[u8]) -> bool) -> Option<Block<'a>> {
    let mut pos = 0;
    while let Some(start) = next_begin(data, pos) {
        let after_begin = start + BEGIN.len();
        pos = after_begin;
        if let Some(block) = decode_at(data, after_begin)
            && accept(block.label)
        {
            return Some(block);
        }
    }
    None
}

const BEGIN: &[u8] = b"-----BEGIN ";
const END: &[u8] = b"-----END ";
const DASHES: &[u8] = b"-----";

/// The offset of the next `-----BEGIN ` at or after `from` that starts a
/// line.
fn next_begin(data: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i + BEGIN.len() <= data.len() {
        let off = find_sub(&data[i..], BEGIN)?;
        let at = i + off;
        if at == 0 || data[at - 1] == b'\n' {
            return Some(at);
        }
        i = at + 1;
    }
    None
}

fn find_sub(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A line without its `\n` and trailing spaces, tabs and `\r`, and the rest.
fn line(data: &[u8]) -> (&[u8], &[u8]) {
    let (l, rest) = match data.iter().position(|b| *b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &data[data.len()..]),
    };
    let trimmed = l.len()
        - l.iter()
            .rev()
            .take_while(|b| matches!(b, b' ' | b'\t' | b'\r'))
            .count();
    (&l[..trimmed], rest)
}

fn decode_at(data: &[u8], after_begin: usize) -> Option<Block<'_>> {
    let (type_line, mut rest) = line(&data[after_begin..]);
    let label = type_line.strip_suffix(DASHES)?;
    // Headers: `Key: value` lines, then an optional blank line.
    let mut headers = false;
    while !rest.is_empty() {
        let (l, r) = line(rest);
        if !l.contains(&b':') {
            break;
        }
        headers = true;
        rest = r;
    }
    if headers && !rest.is_empty() {
        let (l, r) = line(rest);
        if l.is_empty() {
            rest = r;
        }
    }
    let (body, trailer) = if !headers && rest.starts_with(END) {
        (&rest[..0], &rest[END.len()..])
    } else {
        let mut marker = Vec::with_capacity(END.len() + 1);
        marker.push(b'\n');
        marker.extend_from_slice(END);
        let i = find_sub(rest, &marker)?;
        (&rest[..i], &rest[i + marker.len()..])
    };
    let (end_line, _) = line(trailer);
    if end_line.strip_prefix(label)? != DASHES {
        return None;
    }
    let clean: Vec<u8> = body
        .iter()
        .copied()
        .filter(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        .collect();
    let der = BASE64.decode(clean).ok()?;
    Some(Block { label, der })
}

/// Encodes `der` as a PEM block with 64-character lines and a final newline.
pub fn encode(label: &str, der: &[u8]) -> String {
    let b64 = BASE64.encode(der);
    let mut out = String::with_capacity(b64.len() + b64.len() / 64 + 2 * label.len() + 40);
    out.push_str("-----BEGIN ");
    out.push_str(label);
    out.push_str("-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        // base64 output is ASCII.
        out.extend(chunk.iter().map(|b| char::from(*b)));
        out.push('\n');
    }
    out.push_str("-----END ");
    out.push_str(label);
    out.push_str("-----\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn any(_: &[u8]) -> bool {
        true
    }

    #[test]
    fn finds_the_first_block_that_decodes_and_is_wanted() {
        let a = encode("CERTIFICATE", &[1, 2, 3]);
        let b = encode("CERTIFICATE REQUEST", &[4, 5]);
        let data = format!(
            "junk\n{a}\n-----BEGIN CERTIFICATE REQUEST-----\n!!!\n-----END CERTIFICATE REQUEST-----\n{b}"
        );
        let got = find(data.as_bytes(), |l| l == b"CERTIFICATE REQUEST").unwrap();
        assert_eq!(got.der, vec![4, 5]);
        let first = find(data.as_bytes(), any).unwrap();
        assert_eq!(
            (first.label, first.der),
            (&b"CERTIFICATE"[..], vec![1, 2, 3])
        );
    }

    #[test]
    fn begin_must_start_a_line_and_end_must_match() {
        let b = encode("X", &[9]);
        assert!(find(format!(" {b}").as_bytes(), any).is_none());
        assert!(find(b.replace("END X", "END Y").as_bytes(), any).is_none());
        assert!(
            find(b.trim_end().as_bytes(), any).is_some(),
            "no final newline"
        );
        assert!(
            find(b.replace('\n', "\r\n").as_bytes(), any).is_some(),
            "CRLF"
        );
        let empty = "-----BEGIN X-----\n-----END X-----\n";
        assert_eq!(find(empty.as_bytes(), any).unwrap().der, Vec::<u8>::new());
        assert!(
            find(b"-----BEGIN X-----\nAA\n", any).is_none(),
            "unterminated"
        );
        assert!(find(b"-----BEGIN X-----\nAA==\n-----END X----- x\n", any).is_none());
    }

    #[test]
    fn headers_are_skipped() {
        let data =
            "-----BEGIN X-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES\n\nAQI=\n-----END X-----\n";
        assert_eq!(find(data.as_bytes(), any).unwrap().der, vec![1, 2]);
    }
}
