//! Small helpers with no better home: draws from the core's seeded generator,
//! timestamps, UIDs and the hex codec behind continue tokens. Kept here so the crate
//! needs no extra dependencies for them.

use std::time::{SystemTime, UNIX_EPOCH};

/// The core's SplitMix64 generator ([`topospread::Rng`]), with the draws fault
/// injection and name generation need: deterministic for a given seed.
#[derive(Debug, Clone)]
pub(crate) struct Rng(topospread::Rng);

impl Rng {
    /// A generator that yields the same sequence for the same seed.
    pub(crate) fn new(seed: u64) -> Self {
        Rng(topospread::Rng::new(seed))
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A float uniformly drawn from `[0, 1)`.
    pub(crate) fn next_f64(&mut self) -> f64 {
        // 53 random bits, the precision of an f64 mantissa.
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p` (clamped to `[0, 1]`); never draws when `p <= 0`,
    /// so a fault-free configuration leaves the sequence untouched.
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        if p <= 0.0 {
            return false;
        }
        self.next_f64() < p
    }

    /// A UID in the 8-4-4-4-12 hex form the API server gives objects.
    pub(crate) fn uid(&mut self) -> String {
        let a = self.next_u64();
        let b = self.next_u64();
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0x0fff,
            ((b >> 48) & 0x3fff) | 0x8000,
            b & 0xffff_ffff_ffff
        )
    }

    /// A five-character suffix for `generateName`, from the alphabet upstream uses
    /// (no vowels, no look-alike digits).
    pub(crate) fn name_suffix(&mut self) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..5)
            .map(|_| ALPHABET[(self.next_u64() % ALPHABET.len() as u64) as usize] as char)
            .collect()
    }
}

/// The current time as RFC 3339 with second precision, the form of `metav1.Time`.
pub(crate) fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(secs)
}

/// Formats seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub(crate) fn rfc3339(secs: u64) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Lower-case hex of some bytes; continue tokens are hex so they need no escaping.
pub(crate) fn hex_encode(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The inverse of [`hex_encode`]; `None` for anything that is not even-length hex.
pub(crate) fn hex_decode(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_767_225_599), "2025-12-31T23:59:59Z");
    }

    #[test]
    fn hex_round_trips() {
        let s = hex_encode(b"12/ns/name");
        assert_eq!(hex_decode(&s).as_deref(), Some(&b"12/ns/name"[..]));
        assert_eq!(hex_decode("zz"), None);
        assert_eq!(hex_decode("abc"), None);
    }

    #[test]
    fn rng_is_deterministic() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        assert_eq!(a.uid(), b.uid());
        assert_eq!(a.name_suffix(), b.name_suffix());
        assert_eq!(a.uid().len(), 36);
    }

    #[test]
    fn draws_are_splitmix64() {
        // SplitMix64 from seed 0: the reference sequence's first value.
        assert_eq!(Rng::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
    }
}
