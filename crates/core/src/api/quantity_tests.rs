//! Cases from upstream's `quantity_test.go` (TestQuantityParse, TestQuantityParseEmit,
//! TestNegativeValueRoundsAwayFromZero, TestScaledValue, the invalid list).

use super::*;
use proptest::prelude::*;

/// `mantissa × 10^exponent` in nano-units (upstream's `decQuantity(mantissa, exponent)`).
fn dec(mantissa: i128, exponent: i32) -> i128 {
    let shift = exponent + 9;
    assert!(shift >= 0, "test helper only builds nano-exact values");
    mantissa * 10i128.pow(shift.unsigned_abs())
}

fn nanos(s: &str) -> i128 {
    let Ok(q) = Quantity::parse(s) else {
        panic!("{s:?} should parse")
    };
    q.nanos
}

/// TestQuantityParse's table: input and exact value.
const PARSE_TABLE: &[(&str, i128, i32)] = &[
    ("0", 0, 0),
    ("0n", 0, 0),
    ("0u", 0, 0),
    ("0m", 0, 0),
    ("0Ki", 0, 0),
    ("0k", 0, 0),
    ("0Mi", 0, 0),
    ("0M", 0, 0),
    ("0Gi", 0, 0),
    ("0G", 0, 0),
    ("0Ti", 0, 0),
    ("0T", 0, 0),
    ("1", 1, 0),
    ("1Ki", 1024, 0),
    ("8Ki", 8 * 1024, 0),
    ("7Mi", 7 * 1024 * 1024, 0),
    ("6Gi", 6 * 1024 * 1024 * 1024, 0),
    ("5Ti", 5 * (1 << 40), 0),
    ("4Pi", 4 * (1 << 50), 0),
    ("3Ei", 3 * (1 << 60), 0),
    ("10Ti", 10 * (1 << 40), 0),
    ("100Ti", 100 * (1 << 40), 0),
    ("5n", 5, -9),
    ("4u", 4, -6),
    ("3m", 3, -3),
    ("9", 9, 0),
    ("8k", 8, 3),
    ("50k", 5, 4),
    ("7M", 7, 6),
    ("6G", 6, 9),
    ("5T", 5, 12),
    ("40T", 4, 13),
    ("300T", 3, 14),
    ("2P", 2, 15),
    ("1E", 1, 18),
    ("1E-3", 1, -3),
    ("1e3", 1, 3),
    ("1E6", 1, 6),
    ("1e9", 1, 9),
    ("1E12", 1, 12),
    ("1e15", 1, 15),
    ("1E18", 1, 18),
    ("1e14", 1, 14),
    ("1e13", 1, 13),
    ("100.035k", 100035, 0),
    ("0.001", 1, -3),
    ("0.0005k", 5, -1),
    ("0.005", 5, -3),
    ("0.05", 5, -2),
    ("0.5", 5, -1),
    ("0.00050k", 5, -1),
    ("0.00500", 5, -3),
    ("0.05000", 5, -2),
    ("0.50000", 5, -1),
    ("0.5e0", 5, -1),
    ("0.5e-1", 5, -2),
    ("0.5e-2", 5, -3),
    ("10.035M", 10035, 3),
    ("1.2e3", 12, 2),
    ("1.3E+6", 13, 5),
    ("1.40e9", 14, 8),
    ("1.53E12", 153, 10),
    ("1.6e15", 16, 14),
    ("1.7E18", 17, 17),
    ("9.01", 901, -2),
    ("8.1k", 81, 2),
    ("7.123456M", 7123456, 0),
    ("6.987654321G", 6987654321, 0),
    ("5.444T", 5444, 9),
    ("40.1T", 401, 11),
    ("300.2T", 3002, 11),
    ("2.5P", 25, 14),
    ("1.01E", 101, 16),
    // Things that saturate/round.
    ("3.001n", 4, -9),
    ("1.1E-9", 2, -9),
    ("0.0000000001", 1, -9),
    ("0.0000000005", 1, -9),
    ("0.00000000050", 1, -9),
    ("0.5e-9", 1, -9),
    ("0.9n", 1, -9),
    ("0.00000012345", 124, -9),
    ("0.00000012354", 124, -9),
    ("9Ei", i64::MAX as i128, 0),
    ("9223372036854775807Ki", i64::MAX as i128, 0),
    ("12E", 12, 18),
    // Fractional binary.
    ("100.035Ki", 10243584, -2),
    ("0.5Mi", 512 * 1024, 0),
    ("0.05Gi", 536870912, -1),
    ("0.025Ti", 274877906944, -1),
    // "Things written by trolls".
    ("0.000000000001Ki", 2, -9),
    (".001", 1, -3),
    (".0001k", 100, -3),
    ("1.", 1, 0),
    ("1.G", 1, 9),
];

#[test]
fn parses_upstream_table_with_and_without_signs() {
    for &(input, mantissa, exponent) in PARSE_TABLE {
        let want = dec(mantissa, exponent);
        assert_eq!(nanos(input), want, "{input}");
        assert_eq!(nanos(&format!("+{input}")), want, "+{input}");
        assert_eq!(nanos(&format!("-{input}")), -want, "-{input}");
    }
}

#[test]
fn rejects_upstream_invalid_list() {
    let invalid = [
        "",
        "1.1.M",
        "1+1.0M",
        "0.1mi",
        "0.1am",
        "aoeu",
        ".5i",
        "1i",
        "-3.01i",
        "-3.01e-",
        "1e4294967297",
        " 1",
        "1 ",
        "Non-Numeric",
    ];
    for input in invalid {
        assert!(Quantity::parse(input).is_err(), "{input:?} parsed");
    }
}

#[test]
fn errors_carry_upstream_messages() {
    assert_eq!(
        Quantity::parse("1 ").map_err(|e| e.to_string()),
        Err("quantities must match the regular expression \
             '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
            .to_owned())
    );
    assert_eq!(Quantity::parse(""), Err(QuantityError::FormatWrong));
    assert_eq!(Quantity::parse("1Ki5"), Err(QuantityError::Suffix));
    assert_eq!(Quantity::parse("1e"), Err(QuantityError::Suffix));
    assert_eq!(Quantity::parse("1Ee3"), Err(QuantityError::Suffix));
    assert_eq!(Quantity::parse("1-"), Err(QuantityError::Suffix));
    assert_eq!(
        QuantityError::Numeric.to_string(),
        "unable to parse numeric part of quantity"
    );
    assert_eq!(
        QuantityError::Suffix.to_string(),
        "unable to parse quantity's suffix"
    );
}

#[test]
fn exponent_bounds_follow_interpret() {
    // TestInterpretExponentInt32Bounds: ±(2³¹−1) accepted, anything past rejected.
    assert_eq!(
        Quantity::parse("1e2147483647").map(|q| q.value()),
        Ok(i64::MAX)
    );
    assert_eq!(Quantity::parse("1e-2147483647").map(|q| q.value()), Ok(1));
    for bad in [
        "1E2147483648",
        "1E-2147483648",
        "1E8589934592",
        "1E9223372036854775808",
    ] {
        assert_eq!(Quantity::parse(bad), Err(QuantityError::Suffix), "{bad}");
    }
}

#[test]
fn scanner_quirks_match_upstream() {
    // A bare sign, a bare point and zeros are all zero (parseQuantityString's early
    // returns); a point with no digits fails only on the inf.Dec path (scale < nano).
    for zero in ["-", "+", ".", "-.", "000", "-0", "+.Mi", ".Ki", "0.e-10"] {
        assert_eq!(nanos(zero), 0, "{zero:?}");
    }
    assert_eq!(Quantity::parse(".e-10"), Err(QuantityError::Numeric));
    // 19 digits past i64::MAX fail upstream's int64 ParseInt; 20 digits take the
    // decimal path and parse (then saturate).
    assert_eq!(
        Quantity::parse("9999999999999999999"),
        Err(QuantityError::Numeric)
    );
    assert_eq!(
        Quantity::parse("9223372036854775807").map(|q| q.value()),
        Ok(i64::MAX)
    );
    assert_eq!(
        Quantity::parse("99999999999999999999").map(|q| q.value()),
        Ok(i64::MAX)
    );
    // "E" alone is exa; "e" alone is not a suffix.
    assert_eq!(nanos("2E"), dec(2, 18));
}

#[test]
fn parse_emit_values() {
    // TestQuantityParseEmit, by value.
    assert_eq!(nanos(".001Ki"), dec(1024, -3));
    assert_eq!(nanos(".000001Ki"), dec(1024, -6));
    assert_eq!(nanos(".000000001Ki"), dec(1024, -9));
    assert_eq!(nanos(".000000000001Ki"), 2);
    assert_eq!(nanos("1024Mi"), nanos("1Gi"));
    assert_eq!(nanos("1000M"), nanos("1G"));
}

#[test]
fn value_and_milli_round_away_from_zero() {
    // TestNegativeValueRoundsAwayFromZero.
    let table: &[(&str, i64, i64)] = &[
        ("-.484785E-7466", -1, -1),
        (".484785E-7466", 1, 1),
        ("-.484785E-1", -1, -49),
        (".484785E-1", 1, 49),
        ("-0.0005", -1, -1),
        ("0.0005", 1, 1),
        ("-1500m", -2, -1500),
        ("1500m", 2, 1500),
        ("-9.5000000001Gi", -10200547329, -10200547328108),
        ("9.5000000001Gi", 10200547329, 10200547328108),
        ("-1", -1, -1000),
        ("1", 1, 1000),
        ("0", 0, 0),
    ];
    for &(input, value, milli) in table {
        let q = Quantity::parse(input).map_err(|e| format!("{input}: {e}"));
        assert_eq!(
            q.map(|q| (q.value(), q.milli_value())),
            Ok((value, milli)),
            "{input}"
        );
    }
}

#[test]
fn scaled_values_round_up() {
    // TestScaledValue, for the scales the scheduler reads (units and milli-units).
    for (input, value, milli) in [
        ("1n", 1, 1),
        ("1u", 1, 1),
        ("1m", 1, 1),
        ("1", 1, 1000),
        ("100m", 1, 100),
        ("0.1", 1, 100),
        ("0.1m", 1, 1),
        ("1.5Gi", 1610612736, 1610612736000),
        ("500Mi", 524288000, 524288000000),
        ("2Ki", 2048, 2048000),
    ] {
        let q = Quantity::parse(input).map_err(|e| e.to_string());
        assert_eq!(
            q.map(|q| (q.value(), q.milli_value())),
            Ok((value, milli)),
            "{input}"
        );
    }
}

#[test]
fn accessors_saturate() {
    // value() fits but milli_value() does not: upstream saturates the int64 path.
    let q = Quantity::parse("10000000000000000").map_err(|e| e.to_string());
    assert_eq!(
        q.map(|q| (q.value(), q.milli_value())),
        Ok((10_000_000_000_000_000, i64::MAX))
    );
    let q = Quantity::parse("-1e30").map_err(|e| e.to_string());
    assert_eq!(
        q.map(|q| (q.value(), q.milli_value())),
        Ok((i64::MIN, i64::MIN))
    );
    assert_eq!(Quantity::parse("16Ei").map(|q| q.value()), Ok(i64::MAX));
}

#[test]
fn from_api_trims_like_unmarshal_json() {
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;
    // TestJSONWhitespace.
    for (raw, value) in [(" 1", 1), ("1 ", 1), ("10", 10), ("-1", -1), (" -1", -1)] {
        let q = Quantity::from_api(&ApiQuantity(raw.to_owned()));
        assert_eq!(q.map(|q| q.value()), Ok(value), "{raw:?}");
    }
    assert_eq!(Quantity::from_milli(1500).value(), 2);
    assert_eq!(Quantity::from_value(3).milli_value(), 3000);
}

/// The exact value of a plain decimal string, as a rational `numerator / 10^scale`,
/// for strings the strategy below generates.
fn exact(int: &str, frac: &str, negative: bool) -> (i128, u32) {
    let digits = format!("{int}{frac}");
    let magnitude: i128 = digits.parse().unwrap_or(0);
    let scale = u32::try_from(frac.len()).unwrap_or(u32::MAX);
    (if negative { -magnitude } else { magnitude }, scale)
}

proptest! {
    #[test]
    fn parse_never_panics(s in "\\PC{0,40}") {
        let _ = Quantity::parse(&s);
    }

    #[test]
    fn parse_never_panics_on_quantity_alphabet(s in "[-+0-9.eEinumkKMGTP]{0,40}") {
        if let Ok(q) = Quantity::parse(&s) {
            let _ = (q.value(), q.milli_value());
        }
    }

    #[test]
    fn value_is_at_least_the_true_value(
        negative in any::<bool>(),
        int in "[0-9]{1,6}",
        frac in "[0-9]{0,12}",
        suffix in prop::sample::select(vec!["", "m", "k", "M", "Ki", "Mi", "Gi"]),
    ) {
        let text = format!("{}{int}.{frac}{suffix}", if negative { "-" } else { "" });
        let q = Quantity::parse(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let (numerator, scale) = exact(&int, &frac, negative);
        // True value × 1000 × 10^scale, compared with the rounded results.
        let (mul, div): (i128, i128) = match suffix {
            "" => (1, 1),
            "m" => (1, 1000),
            "k" => (1000, 1),
            "M" => (1_000_000, 1),
            "Ki" => (1 << 10, 1),
            "Mi" => (1 << 20, 1),
            _ => (1 << 30, 1),
        };
        let pow = 10i128.pow(scale);
        let true_times = numerator * mul; // value = true_times / (div * pow)
        let value = i128::from(q.value());
        let milli = i128::from(q.milli_value());
        // Rounded away from zero: |value| >= |true value|, and never by a whole unit more.
        prop_assert!(value.abs() * div * pow >= true_times.abs());
        prop_assert!((value.abs() - 1) * div * pow < true_times.abs() || value == 0);
        prop_assert!(milli.abs() * div * pow >= true_times.abs() * 1000);
        prop_assert_eq!(value.signum(), true_times.signum());
        // For non-negative quantities "away from zero" is the ceiling.
        if !negative {
            prop_assert!(value * div * pow >= true_times);
        }
    }
}
