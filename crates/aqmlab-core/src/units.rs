//! Quantities written naturally in scenario files: rates ("10Mbps"), times ("20ms") and sizes
//! ("1500B"). Each parses strictly, says what went wrong, and prints back in a canonical form.

use crate::time::SimTime;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A link or traffic rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

/// A span of simulated time in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(pub SimTime);

/// A size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

/// Splits "1.5 Mbps" into (1.5, "Mbps"): the longest leading part that reads as a finite
/// number, and the trimmed rest. None if no prefix is a number.
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let ends = s.char_indices().map(|(i, c)| i + c.len_utf8());
    let (end, value) = ends
        .filter_map(|e| {
            s[..e]
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .map(|v| (e, v))
        })
        .next_back()?;
    Some((value, s[end..].trim()))
}

const RATE_UNITS: &[(&str, f64)] = &[
    ("bps", 1.0),
    ("bit/s", 1.0),
    ("b/s", 1.0),
    ("kbps", 1e3),
    ("Kbps", 1e3),
    ("kbit/s", 1e3),
    ("kb/s", 1e3),
    ("Mbps", 1e6),
    ("Mbit/s", 1e6),
    ("Mb/s", 1e6),
    ("Gbps", 1e9),
    ("Gbit/s", 1e9),
    ("Gb/s", 1e9),
    ("Tbps", 1e12),
];
const TIME_UNITS: &[(&str, f64)] = &[
    ("ns", 1.0),
    ("us", 1e3),
    ("µs", 1e3),
    ("ms", 1e6),
    ("s", 1e9),
    ("min", 60e9),
    ("h", 3600e9),
];
const SIZE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("kB", 1e3),
    ("KB", 1e3),
    ("KiB", 1024.0),
    ("MB", 1e6),
    ("MiB", 1048576.0),
    ("GB", 1e9),
    ("GiB", 1073741824.0),
];

fn parse_with(s: &str, units: &[(&str, f64)], what: &str, example: &str) -> Result<f64, String> {
    let bad = || format!("{s:?} is not {what}; use e.g. {example:?}");
    let (value, unit) = split_number(s).ok_or_else(bad)?;
    let factor = units
        .iter()
        .find(|(u, _)| *u == unit)
        .map(|(_, f)| *f)
        .ok_or_else(|| {
            if unit.is_empty() {
                format!("{s:?} has no unit; use e.g. {example:?}")
            } else {
                bad()
            }
        })?;
    if value < 0.0 {
        return Err(format!("{s:?} is negative; {what} must be >= 0"));
    }
    Ok(value * factor)
}

impl Rate {
    /// Parses "10Mbps", "1.544 Mb/s", "64kbps".
    pub fn parse(s: &str) -> Result<Rate, String> {
        let v = parse_with(s, RATE_UNITS, "a rate", "10Mbps")?.round();
        if v > u64::MAX as f64 / 2.0 {
            return Err(format!("{s:?} is too large a rate"));
        }
        Ok(Rate(v as u64))
    }
    /// Bits per second as f64.
    pub fn bps(self) -> f64 {
        self.0 as f64
    }
}

impl Duration {
    /// Parses "20ms", "1.5s", "100us".
    pub fn parse(s: &str) -> Result<Duration, String> {
        let v = parse_with(s, TIME_UNITS, "a time", "20ms")?.round();
        if v > 1e18 {
            return Err(format!("{s:?} is too long a time (limit ~31 years)"));
        }
        Ok(Duration(v as SimTime))
    }
    /// Seconds as f64.
    pub fn secs(self) -> f64 {
        crate::time::to_secs(self.0)
    }
}

impl Bytes {
    /// Parses "1500B", "10MB", "8KiB".
    pub fn parse(s: &str) -> Result<Bytes, String> {
        let v = parse_with(s, SIZE_UNITS, "a size", "1500B")?.round();
        if v > 1e18 {
            return Err(format!("{s:?} is too large a size"));
        }
        Ok(Bytes(v as u64))
    }
}

/// Prints `value` (an integer count of base units) with the largest unit that divides it exactly.
fn canonical(value: u64, units: &[(&str, u64)]) -> String {
    for (name, factor) in units.iter().rev() {
        if value != 0 && value.is_multiple_of(*factor) {
            return format!("{}{}", value / factor, name);
        }
    }
    format!("{}{}", value, units[0].0)
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&canonical(
            self.0,
            &[
                ("bps", 1),
                ("kbps", 1_000),
                ("Mbps", 1_000_000),
                ("Gbps", 1_000_000_000),
            ],
        ))
    }
}
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            return f.write_str("0s");
        }
        f.write_str(&canonical(
            self.0,
            &[
                ("ns", 1),
                ("us", 1_000),
                ("ms", 1_000_000),
                ("s", 1_000_000_000),
            ],
        ))
    }
}
impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}B", self.0)
    }
}

macro_rules! string_quantity_serde {
    ($ty:ident, $expecting:expr, $allow_int:expr) => {
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$ty, E> {
                        $ty::parse(v).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        if $allow_int && v >= 0 {
                            Ok($ty(v as u64))
                        } else if $allow_int {
                            Err(E::custom(format!("{v} is negative; must be >= 0")))
                        } else {
                            Err(E::custom(format!(
                                "the number {v} has no unit; write {}",
                                $expecting
                            )))
                        }
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        self.visit_i64(v.min(i64::MAX as u64) as i64)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        Err(E::custom(format!(
                            "the number {v} has no unit; write {}",
                            $expecting
                        )))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

string_quantity_serde!(Rate, "a rate with a unit, e.g. \"10Mbps\"", false);
string_quantity_serde!(Duration, "a time with a unit, e.g. \"20ms\"", false);
string_quantity_serde!(Bytes, "a size, e.g. \"1500B\" or 1500", true);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rates() {
        assert_eq!(Rate::parse("10Mbps"), Ok(Rate(10_000_000)));
        assert_eq!(Rate::parse("1.544 Mb/s"), Ok(Rate(1_544_000)));
        assert_eq!(Rate::parse("64kbps"), Ok(Rate(64_000)));
        assert_eq!(Rate::parse("2.048Mbps"), Ok(Rate(2_048_000)));
        assert!(Rate::parse("10 furlongs")
            .unwrap_err()
            .contains("not a rate"));
        assert!(Rate::parse("10").unwrap_err().contains("no unit"));
        assert!(Rate::parse("-5Mbps").unwrap_err().contains("negative"));
    }

    #[test]
    fn parses_times_and_sizes() {
        assert_eq!(Duration::parse("20ms"), Ok(Duration(20_000_000)));
        assert_eq!(Duration::parse("1.5s"), Ok(Duration(1_500_000_000)));
        assert_eq!(Duration::parse("100us"), Ok(Duration(100_000)));
        assert_eq!(Duration::parse("1e-3s"), Ok(Duration(1_000_000)));
        assert_eq!(Bytes::parse("1500B"), Ok(Bytes(1500)));
        assert_eq!(Bytes::parse("10MB"), Ok(Bytes(10_000_000)));
        assert_eq!(Bytes::parse("8KiB"), Ok(Bytes(8192)));
        assert!(Duration::parse("fast").is_err());
    }

    #[test]
    fn prints_canonically() {
        assert_eq!(Rate(10_000_000).to_string(), "10Mbps");
        assert_eq!(Rate(1_544_000).to_string(), "1544kbps");
        assert_eq!(Duration(20_000_000).to_string(), "20ms");
        assert_eq!(Duration(1_500_000_000).to_string(), "1500ms");
        assert_eq!(Duration(0).to_string(), "0s");
    }
}
