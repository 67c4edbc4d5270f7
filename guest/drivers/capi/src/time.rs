//! The Kubernetes API's timestamps (RFC 3339 in UTC, `2026-11-30T14:27:03Z`,
//! fractions allowed) as the contract's [`Timestamp`]: microseconds since
//! the epoch. The status rules compare them with the call's `now`.

use openkeel_magnum_driver::Timestamp;

const MICROS_PER_SECOND: i64 = 1_000_000;

/// `s` as microseconds since 1970-01-01T00:00:00Z, or `None` when it is
/// not an RFC 3339 time in UTC (`Z`) or with an offset.
pub fn parse_rfc3339(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<i64> {
        let part = s.get(from..to)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())
            .flatten()
    };
    let (year, month, day) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (hour, minute, second) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    // A leap second reads as the second before the next minute.
    let second = second.min(59);
    let mut rest = &s[19..];
    let mut micros = 0;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let kept = &frac[..digits.min(6)];
        micros = kept.parse::<i64>().ok()? * 10_i64.pow(6 - kept.len() as u32);
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let o = rest.as_bytes();
            if o.len() != 6 || o[3] != b':' {
                return None;
            }
            let h: i64 = rest.get(1..3)?.parse().ok()?;
            let m: i64 = rest.get(4..6)?.parse().ok()?;
            sign * (h * 3600 + m * 60)
        }
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
    Some(seconds * MICROS_PER_SECOND + micros)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `minutes` as microseconds.
pub fn minutes(minutes: i64) -> i64 {
    minutes.saturating_mul(60 * MICROS_PER_SECOND)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_api_servers_timestamps() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_rfc3339("2026-11-30T14:27:03Z"),
            Some(1_796_048_823 * MICROS_PER_SECOND)
        );
        assert_eq!(
            parse_rfc3339("2026-11-30T14:27:03.25Z"),
            Some(1_796_048_823 * MICROS_PER_SECOND + 250_000)
        );
        assert_eq!(
            parse_rfc3339("2026-11-30T15:27:03+01:00"),
            parse_rfc3339("2026-11-30T14:27:03Z")
        );
        assert_eq!(
            parse_rfc3339("2024-02-29T00:00:00Z"),
            Some(1_709_164_800 * MICROS_PER_SECOND)
        );
    }

    #[test]
    fn refuses_what_is_not_a_time() {
        for bad in [
            "",
            "2026-11-30",
            "2026-13-01T00:00:00Z",
            "2026-11-30T24:00:00Z",
            "2026-11-30T14:27:03",
            "2026-11-30T14:27:03.Z",
            "2026-11-30T14:27:03+0100",
            "20x6-11-30T14:27:03Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
