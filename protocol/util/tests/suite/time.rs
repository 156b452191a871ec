//! ISO timestamps as pi writes them, and the lenient reading of what people and files give.

use pi_util::time::{iso_from_millis, millis_from_date, millis_from_iso};

#[test]
fn known_values_and_round_trips() {
    assert_eq!(iso_from_millis(0), "1970-01-01T00:00:00.000Z");
    assert_eq!(
        iso_from_millis(1_773_570_030_123),
        "2026-03-15T10:20:30.123Z"
    );
    assert_eq!(iso_from_millis(-1), "1969-12-31T23:59:59.999Z");
    for millis in [
        0,
        951_782_400_000,
        1_709_164_800_999,
        4_102_444_800_000,
        -86_400_000,
    ] {
        assert_eq!(millis_from_iso(&iso_from_millis(millis)), Some(millis));
    }
}

/// `millis_from_iso(input)` against `expect`, with the expected instant written as ISO UTC.
fn check(input: &str, expect: Option<&str>) {
    let got = millis_from_iso(input).map(iso_from_millis);
    assert_eq!(got.as_deref(), expect, "for {input:?}");
}

#[test]
fn the_front_end_is_lenient() {
    check("2026-03-15T10:20:30.123Z", Some("2026-03-15T10:20:30.123Z"));
    check("2026-03-15t10:20:30.123z", None);
    check("2026-03-15 10:20:30.123Z", Some("2026-03-15T10:20:30.123Z"));
    check(
        "  2026-03-15T10:20:30.123Z  ",
        Some("2026-03-15T10:20:30.123Z"),
    );
    check("2026-03-15T10:20", Some("2026-03-15T10:20:00.000Z"));
    check("2026-03-15T10:20:30", Some("2026-03-15T10:20:30.000Z"));
    check("2026-03-15T10:20:30.1Z", Some("2026-03-15T10:20:30.100Z"));
    check(
        "2026-03-15T10:20:30.123456789Z",
        Some("2026-03-15T10:20:30.123Z"),
    );
    check(
        "2026-03-15T11:20:30.123+01:00",
        Some("2026-03-15T10:20:30.123Z"),
    );
    check(
        "2026-03-15T05:50:30.123-04:30",
        Some("2026-03-15T10:20:30.123Z"),
    );
    check("2026-03-15T12:20:30+02", Some("2026-03-15T10:20:30.000Z"));
    check("2024-02-29T00:00:00Z", Some("2024-02-29T00:00:00.000Z"));
}

#[test]
fn the_calendar_is_strict() {
    check("not a date", None);
    check("2026-03-15", None);
    check("2026-13-01T00:00Z", None);
    check("2026-00-01T00:00Z", None);
    check("2026-03-32T00:00Z", None);
    check("2026-03-15T24:00Z", None);
    check("2026-03-15T10:60Z", None);
    check("2026-03-15T10:20:30.xZ", None);
    // Before chrono, an impossible day was carried into the next month.
    check("2024-02-30T00:00:00Z", None);
    check("2023-02-29T00:00:00Z", None);
    check("2026-04-31T00:00:00Z", None);
}

#[test]
fn a_leap_second_is_the_next_minute() {
    check("2016-12-31T23:59:60Z", Some("2017-01-01T00:00:00.000Z"));
    check("2016-12-31T23:59:60.500Z", Some("2017-01-01T00:00:00.500Z"));
    check("2026-03-15T10:20:60Z", Some("2026-03-15T10:21:00.000Z"));
    check("2026-03-15T10:20:61Z", None);
}

#[test]
fn years_beyond_four_digits_are_signed_and_the_range_is_clamped() {
    assert_eq!(
        iso_from_millis(253_402_300_800_000),
        "+10000-01-01T00:00:00.000Z"
    );
    assert_eq!(iso_from_millis(i64::MAX), iso_from_millis(i64::MAX - 1));
    assert!(iso_from_millis(i64::MAX).starts_with("+262"));
    assert!(iso_from_millis(i64::MIN).starts_with("-262"));
}

#[test]
fn dates_are_midnight_utc() {
    let midnight = millis_from_date("2026-03-15").unwrap();
    assert_eq!(iso_from_millis(midnight), "2026-03-15T00:00:00.000Z");
    assert_eq!(millis_from_date(" 1970-01-01 "), Some(0));
    assert_eq!(millis_from_date("2026-13-01"), None);
    assert_eq!(millis_from_date("2026-02-30"), None);
    assert_eq!(millis_from_date("2026-03-15-01"), None);
    assert_eq!(millis_from_date("yesterday"), None);
}
