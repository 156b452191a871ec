//! The clock as Unix milliseconds, and ISO-8601 timestamps as pi writes them in session files
//! (`2026-03-15T10:20:30.123Z`), both ways, on chrono's proleptic Gregorian calendar.
//!
//! Parsing is lenient at the front, as pi's files and people's hands are: `T` or a space
//! between date and time, optional seconds and fraction (milliseconds are kept, the rest
//! dropped), and `Z`, `±HH:MM`, `±HH` or nothing (UTC) at the end. The calendar is strict: a
//! date that does not exist (`2024-02-30`) is `None`. A leap second (`:60`) is the first
//! millisecond of the next minute.

use chrono::{DateTime, NaiveDate, Utc};

/// Now, as Unix milliseconds (0 when the clock is before 1970).
pub fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}

/// Formats Unix milliseconds as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC). Years past 9999 get a `+`
/// sign; instants beyond chrono's range (about 262,000 years either way) are clamped to it.
pub fn iso_from_millis(millis: i64) -> String {
    let instant = DateTime::from_timestamp_millis(millis).unwrap_or(if millis < 0 {
        DateTime::<Utc>::MIN_UTC
    } else {
        DateTime::<Utc>::MAX_UTC
    });
    instant.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Today's date in the machine's time zone (`TZ`, else `/etc/localtime`), `YYYY-MM-DD`: the
/// date pi writes into its system prompt.
pub fn local_date() -> String {
    chrono::Local::now().format("%Y-%m-%d").to_string()
}

/// Parses `YYYY-MM-DD(T| )HH:MM[:SS[.fff…]][Z|±HH:MM|±HH]` into Unix milliseconds.
pub fn millis_from_iso(text: &str) -> Option<i64> {
    let text = text.trim();
    let (date, time) = text.split_once('T').or_else(|| text.split_once(' '))?;
    let mut date_parts = date.split('-');
    let year: i32 = date_parts.next()?.parse().ok()?;
    let month: u32 = date_parts.next()?.parse().ok()?;
    let day: u32 = date_parts.next()?.parse().ok()?;
    let (clock, offset_minutes) = split_offset(time)?;
    let mut clock_parts = clock.split(':');
    let hour: u32 = clock_parts.next()?.parse().ok()?;
    let minute: u32 = clock_parts.next()?.parse().ok()?;
    let seconds_text = clock_parts.next().unwrap_or("0");
    let (whole, fraction) = seconds_text.split_once('.').unwrap_or((seconds_text, ""));
    let second: u32 = whole.parse().ok()?;
    let millis: u32 = format!("{:0<3}", fraction.chars().take(3).collect::<String>())
        .parse()
        .ok()?;
    // chrono writes a leap second as second 59 with 1,000 ms or more.
    let (second, millis) = if second == 60 {
        (59, 1000 + millis)
    } else {
        (second, millis)
    };
    let local = NaiveDate::from_ymd_opt(year, month, day)?
        .and_hms_milli_opt(hour, minute, second, millis)?;
    Some(local.and_utc().timestamp_millis() - offset_minutes * 60_000)
}

/// Parses `YYYY-MM-DD` into the Unix milliseconds of that day's midnight, UTC.
pub fn millis_from_date(text: &str) -> Option<i64> {
    let mut parts = text.trim().split('-');
    let year: i32 = parts.next()?.parse().ok()?;
    let month: u32 = parts.next()?.parse().ok()?;
    let day: u32 = parts.next()?.parse().ok()?;
    if parts.next().is_some() {
        return None;
    }
    let midnight = NaiveDate::from_ymd_opt(year, month, day)?.and_hms_opt(0, 0, 0)?;
    Some(midnight.and_utc().timestamp_millis())
}

/// The clock text and the offset east of UTC in minutes.
fn split_offset(time: &str) -> Option<(&str, i64)> {
    if let Some(clock) = time.strip_suffix('Z').or_else(|| time.strip_suffix('z')) {
        return Some((clock, 0));
    }
    if let Some(position) = time.rfind(['+', '-']) {
        let (clock, offset) = time.split_at(position);
        let sign = if offset.starts_with('-') { -1 } else { 1 };
        let (hours, minutes) = offset[1..].split_once(':').unwrap_or((&offset[1..], "0"));
        return Some((
            clock,
            sign * (hours.parse::<i64>().ok()? * 60 + minutes.parse::<i64>().ok()?),
        ));
    }
    Some((time, 0))
}
