//! Time zones as Spark names them (`java.time.ZoneId.of` with `ZoneId.SHORT_IDS`): region ids
//! from the tz database (chrono-tz), fixed offsets (`+05:30`, `-08`, `UTC+8`, `GMT+1`, `Z`), and
//! Java's three-letter short ids. Local times resolve as `ZonedDateTime.of` does: in a gap (the
//! clock jumps forward) the time moves later by the gap's length, in an overlap the earlier
//! offset wins.

use chrono::{NaiveDateTime, Offset, TimeZone};

/// Microseconds per second (timestamp.rs builds on this file, so it does not import that one's).
const MICROS_PER_SECOND: i64 = 1_000_000;

/// A zone: a fixed offset or a region's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Zone {
    /// Seconds east of UTC.
    Fixed(i64),
    /// A tz database region (`America/Los_Angeles`).
    Region(chrono_tz::Tz),
}

/// Java's `ZoneId.SHORT_IDS`, which Spark's zone lookup accepts.
const SHORT_IDS: &[(&str, &str)] = &[
    ("ACT", "Australia/Darwin"), ("AET", "Australia/Sydney"), ("AGT", "America/Argentina/Buenos_Aires"), ("ART", "Africa/Cairo"),
    ("AST", "America/Anchorage"), ("BET", "America/Sao_Paulo"), ("BST", "Asia/Dhaka"), ("CAT", "Africa/Harare"),
    ("CNT", "America/St_Johns"), ("CST", "America/Chicago"), ("CTT", "Asia/Shanghai"), ("EAT", "Africa/Addis_Ababa"),
    ("ECT", "Europe/Paris"), ("IET", "America/Indiana/Indianapolis"), ("IST", "Asia/Kolkata"), ("JST", "Asia/Tokyo"),
    ("MIT", "Pacific/Apia"), ("NET", "Asia/Yerevan"), ("NST", "Pacific/Auckland"), ("PLT", "Asia/Karachi"),
    ("PNT", "America/Phoenix"), ("PRT", "America/Puerto_Rico"), ("PST", "America/Los_Angeles"), ("SST", "Pacific/Guadalcanal"),
    ("VST", "Asia/Ho_Chi_Minh"), ("EST", "-05:00"), ("MST", "-07:00"), ("HST", "-10:00"),
];

impl Zone {
    /// UTC, the zone of a timestamp function before the analyzer gives it the session's.
    pub const UTC: Zone = Zone::Fixed(0);

    /// The zone an id names, as Spark's `getZoneId` reads it; None for an unknown id.
    pub fn parse(id: &str) -> Option<Zone> {
        let id = SHORT_IDS.iter().find(|(short, _)| *short == id).map_or(id, |(_, full)| *full);
        if let Some(rest) = ["UTC", "GMT", "UT"].iter().find_map(|p| id.strip_prefix(p)) {
            return if rest.is_empty() { Some(Zone::Fixed(0)) } else { fixed_offset(rest) };
        }
        if id == "Z" || id.starts_with(['+', '-']) {
            return fixed_offset(id);
        }
        id.parse::<chrono_tz::Tz>().ok().map(Zone::Region)
    }

    /// The zone's id as `current_timezone()` prints it: the region's name, `UTC`, or the
    /// offset (`+05:00`).
    pub fn id(&self) -> String {
        match self {
            Zone::Region(tz) => tz.name().to_string(),
            Zone::Fixed(0) => "UTC".to_string(),
            Zone::Fixed(s) => offset_text(*s, ":", false),
        }
    }

    /// Seconds east of UTC at the instant `utc_micros`.
    pub fn offset_at(&self, utc_micros: i64) -> i64 {
        match self {
            Zone::Fixed(s) => *s,
            Zone::Region(tz) => match naive(utc_micros) {
                Some(t) => tz.offset_from_utc_datetime(&t).fix().local_minus_utc() as i64,
                None => 0,
            },
        }
    }

    /// The zone's short name at the instant `utc_micros`, as Java's `z` prints it (`PST`, `IST`,
    /// `UTC`, `+05:30`); None where the tz database has only a numeric abbreviation (`-03`),
    /// whose Java name kiln does not know.
    pub fn short_name(&self, utc_micros: i64) -> Option<String> {
        use chrono_tz::OffsetName;
        match self {
            Zone::Fixed(0) => Some("UTC".into()),
            Zone::Fixed(s) => Some(offset_text(*s, ":", false)),
            Zone::Region(tz) => {
                let offset = tz.offset_from_utc_datetime(&naive(utc_micros)?);
                offset.abbreviation().filter(|a| a.chars().all(|c| c.is_ascii_alphabetic())).map(str::to_string)
            }
        }
    }

    /// The wall-clock time in this zone at the instant `utc_micros`, as microseconds (None past
    /// the range of timestamps).
    pub fn from_utc(&self, utc_micros: i64) -> Option<i64> {
        utc_micros.checked_add(self.offset_at(utc_micros) * MICROS_PER_SECOND)
    }

    /// The instant whose wall-clock time in this zone is `local_micros` (a timestamp read as
    /// local time), resolved as Java resolves gaps and overlaps.
    pub fn to_utc(&self, local_micros: i64) -> Option<i64> {
        let shifted = |offset_seconds: i64| local_micros.checked_sub(offset_seconds * MICROS_PER_SECOND);
        let Zone::Region(tz) = self else {
            return shifted(self.offset_at(local_micros));
        };
        let t = naive(local_micros)?;
        let offset = match tz.offset_from_local_datetime(&t) {
            chrono::LocalResult::Single(o) => o.fix(),
            chrono::LocalResult::Ambiguous(earlier, later) => {
                // The offset before the transition (the larger one when clocks go back).
                if earlier.fix().local_minus_utc() >= later.fix().local_minus_utc() { earlier.fix() } else { later.fix() }
            }
            // In a gap: the offset in force before it (a day earlier), so the time moves later.
            chrono::LocalResult::None => return shifted(self.offset_at(local_micros.checked_sub(86_400 * MICROS_PER_SECOND)?)),
        };
        shifted(offset.local_minus_utc() as i64)
    }
}

/// `+hh<sep>mm`, with `<sep>ss` when the offset has seconds; `Z` for zero when `z_for_zero`.
pub fn offset_text(seconds: i64, sep: &str, z_for_zero: bool) -> String {
    if seconds == 0 && z_for_zero {
        return "Z".into();
    }
    let a = seconds.abs();
    let tail = if a % 60 == 0 { String::new() } else { format!("{sep}{:02}", a % 60) };
    format!("{}{:02}{sep}{:02}{tail}", if seconds < 0 { '-' } else { '+' }, a / 3600, a % 3600 / 60)
}

fn naive(micros: i64) -> Option<NaiveDateTime> {
    chrono::DateTime::from_timestamp_micros(micros).map(|d| d.naive_utc())
}

/// `Z`, `+h`, `+hh`, `+hh:mm`, `+hhmm`, `+hh:mm:ss`, `+hhmmss` (Java's ZoneOffset.of), within 18 hours.
fn fixed_offset(text: &str) -> Option<Zone> {
    if text == "Z" {
        return Some(Zone::Fixed(0));
    }
    let (sign, body) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let digits: String = body.chars().filter(|c| *c != ':').collect();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let colons = body.matches(':').count();
    let (h, m, s) = match (digits.len(), colons) {
        (1 | 2, 0) => (&digits[..], "0", "0"),
        (4, 0 | 1) => (&digits[..2], &digits[2..4], "0"),
        (6, 0 | 2) => (&digits[..2], &digits[2..4], &digits[4..]),
        _ => return None,
    };
    let (h, m, s): (i64, i64, i64) = (h.parse().ok()?, m.parse().ok()?, s.parse().ok()?);
    if m > 59 || s > 59 || h * 3600 + m * 60 + s > 18 * 3600 {
        return None;
    }
    Some(Zone::Fixed(sign * (h * 3600 + m * 60 + s)))
}

/// The machine's zone, as the JVM reads it (`TZ`), for Spark's default session time zone and
/// `SET TIME ZONE LOCAL`; UTC when `TZ` is unset or names no zone.
pub fn local_zone_id() -> String {
    std::env::var("TZ").ok().map(|tz| tz.trim_start_matches(':').to_string()).filter(|tz| Zone::parse(tz).is_some()).unwrap_or_else(|| "UTC".to_string())
}

/// Spark's INVALID_TIMEZONE.
pub fn invalid_zone(id: &str) -> crate::error::KilnError {
    crate::error::KilnError::exec(format!(
        "[INVALID_TIMEZONE] The timezone: {id} is invalid. The timezone must be either a region-based zone ID or a zone offset. Region IDs must have the form 'area/city', such as 'America/Los_Angeles'. Zone offsets must be in the format '(+|-)HH', '(+|-)HH:mm' or '(+|-)HH:mm:ss', e.g '-08', '+01:00' or '-13:33:33'., and must be in the range from -18:00 to +18:00. 'Z' and 'UTC' are accepted as synonyms for '+00:00'. SQLSTATE: 22009"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3600 * MICROS_PER_SECOND;

    #[test]
    fn ids_read_as_java_reads_them() {
        assert_eq!(Zone::parse("+05:30"), Some(Zone::Fixed(19800)));
        assert_eq!(Zone::parse("GMT+1"), Some(Zone::Fixed(3600)));
        assert_eq!(Zone::parse("UTC-0830"), Some(Zone::Fixed(-30600)));
        assert_eq!(Zone::parse("Z"), Some(Zone::Fixed(0)));
        assert_eq!(Zone::parse("EST"), Some(Zone::Fixed(-18000)));
        assert!(matches!(Zone::parse("PST"), Some(Zone::Region(_))));
        assert_eq!(Zone::parse("Mars/Phobos"), None);
        assert_eq!(Zone::parse("+19:00"), None);
    }

    #[test]
    fn gaps_move_later_and_overlaps_take_the_earlier_offset() {
        let la = Zone::parse("America/Los_Angeles").unwrap();
        // 2019-03-10 02:30 does not exist in Los Angeles: 03:30 PDT, 10:30 UTC.
        let gap = 1_552_185_000 * MICROS_PER_SECOND; // 2019-03-10 02:30 as UTC wall-clock
        assert_eq!(la.to_utc(gap), Some(gap + 8 * H));
        // 2019-11-03 01:30 happens twice: PDT (UTC-7) first.
        let overlap = 1_572_744_600 * MICROS_PER_SECOND;
        assert_eq!(la.to_utc(overlap), Some(overlap + 7 * H));
        assert_eq!(la.from_utc(overlap + 7 * H), Some(overlap));
    }
}
