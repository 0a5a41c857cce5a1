//! Kubernetes resource quantities (`100m`, `500Mi`, `1.5Gi`, `1e3`), parsed exactly as
//! apimachinery's `resource.ParseQuantity` accepts them.
//!
//! A [`Quantity`] keeps its value as a whole number of nano-units in an `i128`, which is
//! what upstream keeps too: every parsed value is rounded away from zero to a multiple of
//! 10⁻⁹ (`0.1n` is `1n`), and binary-suffixed values are capped at 2⁶³−1. Values too
//! large for any scheduler use (beyond ±10²¹) are clamped; [`Quantity::value`] and
//! [`Quantity::milli_value`] saturate at the `i64` rails for them, as upstream does.

use std::fmt;
use std::str::FromStr;

/// The regular expression upstream quotes when a quantity is malformed.
const SPLIT_RE: &str = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";

/// Nano-units per unit.
const NANO: i128 = 1_000_000_000;

/// Largest magnitude kept, in nano-units (10²¹ units: far past `i64`, so every
/// accessor saturates long before the clamp is reached).
const MAX_NANOS: i128 = 1_000_000_000_000_000_000_000_000_000_000;

/// Decimal digits of [`MAX_NANOS`] minus one: a number with more significant digits
/// than this is at least `MAX_NANOS`.
const MAX_NANOS_DIGITS: usize = 30;

/// Why a string is not a quantity. The messages are upstream's, word for word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QuantityError {
    /// The string is empty or is not a number followed by a suffix.
    #[error("quantities must match the regular expression '{SPLIT_RE}'")]
    FormatWrong,
    /// The number part has no digits where upstream needs some, or does not fit.
    #[error("unable to parse numeric part of quantity")]
    Numeric,
    /// The suffix is not one of the SI, binary-SI or exponent suffixes.
    #[error("unable to parse quantity's suffix")]
    Suffix,
}

/// A parsed resource quantity, exact to the nano-unit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Quantity {
    nanos: i128,
}

/// The three parts the scanner splits a quantity into.
struct Scanned<'a> {
    negative: bool,
    /// Integer digits with leading zeros stripped (may be empty).
    num: &'a str,
    /// Fraction digits (may be empty).
    denom: &'a str,
    suffix: &'a str,
    /// Whether the number part held at least one digit (upstream's `inf.Dec` path
    /// rejects a number without one).
    any_digit: bool,
}

/// What a suffix means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Suffix {
    /// A power of ten: SI (`m`, `k`, `M`, ...) or an exponent (`e3`, `E-2`).
    Decimal { exponent: i64 },
    /// A power of two (`Ki` = 2¹⁰ ... `Ei` = 2⁶⁰).
    Binary { exponent: u32 },
}

impl Quantity {
    /// Zero.
    pub const ZERO: Quantity = Quantity { nanos: 0 };

    /// Parses `s` exactly as upstream's `ParseQuantity`: no surrounding whitespace, one
    /// optional sign, digits with an optional point, then a suffix.
    pub fn parse(s: &str) -> Result<Self, QuantityError> {
        if s.is_empty() {
            return Err(QuantityError::FormatWrong);
        }
        if s == "0" {
            return Ok(Self::ZERO);
        }
        let scanned = scan(s)?;
        let suffix = interpret_suffix(scanned.suffix).ok_or(QuantityError::Suffix)?;
        let digits = significant_digits(scanned.num, scanned.denom);
        let denom_len = i64::try_from(scanned.denom.len()).unwrap_or(i64::MAX);
        let magnitude = match suffix {
            Suffix::Decimal { exponent } => {
                let scale = exponent.saturating_sub(denom_len);
                let total_len = scanned.num.len().max(1) + scanned.denom.len();
                // Upstream's int64 fast path: at most 19 digits and a scale of at least
                // nano. A 19-digit number past i64::MAX fails its ParseInt there.
                let fast_path = total_len <= 19 && scale >= -9;
                if fast_path && digits_exceed_i64(&digits) {
                    return Err(QuantityError::Numeric);
                }
                if !fast_path && !scanned.any_digit {
                    return Err(QuantityError::Numeric);
                }
                nanos_from_digits(&digits, scale.saturating_add(9))
            }
            Suffix::Binary { exponent } => {
                let scaled = multiply_by_pow2(&digits, exponent);
                let nanos = nanos_from_digits(&scaled, 9 - denom_len);
                nanos.min(i128::from(i64::MAX) * NANO)
            }
        };
        let nanos = if scanned.negative {
            -magnitude
        } else {
            magnitude
        };
        Ok(Self { nanos })
    }

    /// Parses a k8s-openapi quantity as the API server decodes one from JSON or YAML:
    /// surrounding whitespace is trimmed first, then [`Quantity::parse`] applies.
    pub(crate) fn from_api(
        q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity,
    ) -> Result<Self, QuantityError> {
        Self::parse(q.0.trim())
    }

    /// A quantity of `value` whole units.
    pub fn from_value(value: i64) -> Self {
        Self {
            nanos: i128::from(value) * NANO,
        }
    }

    /// A quantity of `milli` thousandths of a unit.
    pub(crate) fn from_milli(milli: i64) -> Self {
        Self {
            nanos: i128::from(milli) * 1_000_000,
        }
    }

    /// The value in whole units, rounded away from zero (`1500m` is 2, `-1500m` is -2),
    /// saturating at the `i64` rails.
    pub fn value(&self) -> i64 {
        scaled(self.nanos, NANO)
    }

    /// The value in thousandths, rounded away from zero (`0.1m` is 1), saturating at the
    /// `i64` rails.
    pub fn milli_value(&self) -> i64 {
        scaled(self.nanos, 1_000_000)
    }

    /// The sum, clamped to the range this type keeps (±10²¹ units).
    pub fn saturating_add(self, other: Quantity) -> Quantity {
        Quantity {
            nanos: self
                .nanos
                .saturating_add(other.nanos)
                .clamp(-MAX_NANOS, MAX_NANOS),
        }
    }

    /// Whether the quantity is zero.
    pub fn is_zero(&self) -> bool {
        self.nanos == 0
    }

    /// -1, 0 or 1 as the quantity is negative, zero or positive.
    pub fn signum(&self) -> i32 {
        match self.nanos.signum() {
            0 => 0,
            s if s > 0 => 1,
            _ => -1,
        }
    }
}

impl FromStr for Quantity {
    type Err = QuantityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for Quantity {
    /// Writes the value in nano-units with a trailing `n`, or whole units when exact.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.nanos % NANO == 0 {
            write!(f, "{}", self.nanos / NANO)
        } else {
            write!(f, "{}n", self.nanos)
        }
    }
}

/// `nanos / divisor`, rounded away from zero, saturated to `i64`.
fn scaled(nanos: i128, divisor: i128) -> i64 {
    let quotient = nanos / divisor;
    let rounded = if nanos % divisor == 0 {
        quotient
    } else {
        quotient + nanos.signum()
    };
    i64::try_from(rounded).unwrap_or(if rounded < 0 { i64::MIN } else { i64::MAX })
}

/// Upstream's scanner: sign, digits, optional point and digits, then suffix letters, an
/// optional sign and digits. Anything after that is `FormatWrong`.
fn scan(s: &str) -> Result<Scanned<'_>, QuantityError> {
    let bytes = s.as_bytes();
    let end = bytes.len();
    let mut pos = 0;
    let mut negative = false;
    match bytes.first() {
        Some(b'-') => {
            negative = true;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    let zeros_start = pos;
    while pos < end && bytes[pos] == b'0' {
        pos += 1;
    }
    let stripped_zero = pos > zeros_start;
    if pos >= end {
        // Nothing but a sign and zeros: upstream returns zero ("-" and "+" included).
        return Ok(Scanned {
            negative,
            num: "",
            denom: "",
            suffix: "",
            any_digit: true,
        });
    }
    let num_start = pos;
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    let num = &s[num_start..pos];
    let mut denom = "";
    if pos < end && bytes[pos] == b'.' {
        pos += 1;
        let denom_start = pos;
        while pos < end && bytes[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &s[denom_start..pos];
    }
    let any_digit = stripped_zero || !num.is_empty() || !denom.is_empty();
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&bytes[pos]) {
        pos += 1;
    }
    if pos < end && (bytes[pos] == b'-' || bytes[pos] == b'+') {
        pos += 1;
    }
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(QuantityError::FormatWrong);
    }
    Ok(Scanned {
        negative,
        num,
        denom,
        suffix: &s[suffix_start..],
        any_digit,
    })
}

/// Upstream's suffixer: the SI and binary-SI tables, then `e`/`E` followed by a 64-bit
/// integer within ±(2³¹−1).
fn interpret_suffix(suffix: &str) -> Option<Suffix> {
    let decimal = |exponent| Suffix::Decimal { exponent };
    let found = match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => Suffix::Binary { exponent: 10 },
        "Mi" => Suffix::Binary { exponent: 20 },
        "Gi" => Suffix::Binary { exponent: 30 },
        "Ti" => Suffix::Binary { exponent: 40 },
        "Pi" => Suffix::Binary { exponent: 50 },
        "Ei" => Suffix::Binary { exponent: 60 },
        _ => {
            let rest = suffix
                .strip_prefix('e')
                .or_else(|| suffix.strip_prefix('E'))?;
            // Go's ParseInt: optional sign, then ASCII digits only.
            let unsigned = rest.strip_prefix(['+', '-']).unwrap_or(rest);
            if unsigned.is_empty() || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let exponent: i64 = rest.parse().ok()?;
            if exponent.unsigned_abs() > u64::from(i32::MAX.unsigned_abs()) {
                return None;
            }
            Suffix::Decimal { exponent }
        }
    };
    Some(found)
}

/// The digits of `num` then `denom` as values 0..=9, without leading zeros.
fn significant_digits(num: &str, denom: &str) -> Vec<u8> {
    num.bytes()
        .chain(denom.bytes())
        .map(|b| b - b'0')
        .skip_while(|&d| d == 0)
        .collect()
}

/// Whether the (at most 19) significant digits exceed `i64::MAX`.
fn digits_exceed_i64(digits: &[u8]) -> bool {
    let mut value: u64 = 0;
    for &d in digits {
        match value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d)))
        {
            Some(v) => value = v,
            None => return true,
        }
    }
    value > i64::MAX.unsigned_abs()
}

/// `digits × 2^exponent`, as digits without leading zeros.
fn multiply_by_pow2(digits: &[u8], exponent: u32) -> Vec<u8> {
    if digits.is_empty() {
        return Vec::new();
    }
    // Little-endian working copy.
    let mut out: Vec<u8> = digits.iter().rev().copied().collect();
    let mut remaining = exponent;
    while remaining > 0 {
        let step = remaining.min(10);
        remaining -= step;
        let factor = 1u32 << step;
        let mut carry = 0u32;
        for d in &mut out {
            let v = u32::from(*d) * factor + carry;
            *d = (v % 10) as u8;
            carry = v / 10;
        }
        while carry > 0 {
            out.push((carry % 10) as u8);
            carry /= 10;
        }
    }
    out.reverse();
    out
}

/// `digits × 10^shift` rounded away from zero to an integer, clamped to [`MAX_NANOS`].
fn nanos_from_digits(digits: &[u8], shift: i64) -> i128 {
    if digits.is_empty() {
        return 0;
    }
    let (head, round_up) = if shift >= 0 {
        let extra = usize::try_from(shift).unwrap_or(usize::MAX);
        if digits.len().saturating_add(extra) > MAX_NANOS_DIGITS + 1 {
            return MAX_NANOS;
        }
        (digits, false)
    } else {
        let cut = usize::try_from(shift.unsigned_abs()).unwrap_or(usize::MAX);
        if cut >= digits.len() {
            // Only a fraction of a nano-unit is left; upstream rounds it up to one.
            return 1;
        }
        let (head, tail) = digits.split_at(digits.len() - cut);
        (head, tail.iter().any(|&d| d != 0))
    };
    if head.len() > MAX_NANOS_DIGITS + 1 {
        return MAX_NANOS;
    }
    let mut value: i128 = 0;
    for &d in head {
        value = value * 10 + i128::from(d);
    }
    if shift > 0 {
        for _ in 0..shift {
            value *= 10;
        }
    }
    if round_up {
        value += 1;
    }
    value.min(MAX_NANOS)
}

#[cfg(test)]
#[path = "quantity_tests.rs"]
mod tests;
