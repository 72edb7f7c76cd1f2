//! Quantities with units, written in scenario files as strings: "10Mbps", "25ms", "1500B".
//!
//! Each type parses strictly: a number, then one of its listed unit suffixes. Negative
//! numbers, unknown suffixes and missing units are errors that say what is allowed.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use xlayer_proto::SimDur;

fn split_number(s: &str) -> Result<(f64, &str), String> {
    let s = s.trim();
    let end = s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+')).unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let value: f64 = num.parse().map_err(|_| format!("`{s}` does not start with a number"))?;
    if value < 0.0 {
        return Err(format!("`{s}` is negative; it must be zero or more"));
    }
    Ok((value, unit.trim()))
}

fn scaled(s: &str, units: &[(&str, f64)], what: &str) -> Result<f64, String> {
    let (value, unit) = split_number(s)?;
    units.iter().find(|(name, _)| *name == unit).map(|(_, k)| value * k).ok_or_else(|| {
        let allowed: Vec<&str> = units.iter().map(|(n, _)| *n).collect();
        format!("`{s}` is not a {what}: expected a number followed by one of {}", allowed.join(", "))
    })
}

const RATE_UNITS: &[(&str, f64)] = &[
    ("bps", 1.0),
    ("kbps", 1e3),
    ("Kbps", 1e3),
    ("Mbps", 1e6),
    ("Gbps", 1e9),
    ("b/s", 1.0),
    ("kb/s", 1e3),
    ("Mb/s", 1e6),
    ("Gb/s", 1e9),
];
const TIME_UNITS: &[(&str, f64)] = &[("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0), ("min", 60.0)];
const SIZE_UNITS: &[(&str, f64)] =
    &[("B", 1.0), ("kB", 1e3), ("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("KiB", 1024.0), ("MiB", 1048576.0)];

macro_rules! unit_type {
    ($name:ident, $inner:ty, $what:literal, $pattern:literal, $example:literal, $parse:expr, $show:expr) => {
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name(pub $inner);

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                ($parse)(s).map($name)
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                ($show)(self.0, f)
            }
        }
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl JsonSchema for $name {
            fn schema_name() -> String {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
                let mut o = schemars::schema::SchemaObject {
                    instance_type: Some(schemars::schema::InstanceType::String.into()),
                    ..Default::default()
                };
                o.string().pattern = Some($pattern.into());
                o.metadata().description = Some(format!("A {}, e.g. \"{}\".", $what, $example));
                o.into()
            }
        }
    };
}

unit_type!(
    Rate,
    u64,
    "bit rate (bps, kbps, Mbps, Gbps, or b/s forms)",
    r"^[0-9.]+\s*(bps|kbps|Kbps|Mbps|Gbps|b/s|kb/s|Mb/s|Gb/s)$",
    "10Mbps",
    |s: &str| {
        let v = scaled(s, RATE_UNITS, "bit rate")?;
        if v < 1.0 {
            return Err(format!("`{s}` is below 1 bps; a rate must be positive"));
        }
        Ok(v.round() as u64)
    },
    |v: u64, f: &mut fmt::Formatter<'_>| write!(f, "{v}bps")
);

unit_type!(
    Duration,
    SimDur,
    "duration (ns, us, ms, s, min)",
    r"^[0-9.]+\s*(ns|us|ms|s|min)$",
    "25ms",
    |s: &str| scaled(s, TIME_UNITS, "duration").map(SimDur::from_secs_f64),
    |v: SimDur, f: &mut fmt::Formatter<'_>| {
        // The largest unit that shows the value exactly: "100ms", not "100000000ns".
        let ns = v.0;
        match [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")].iter().find(|(k, _)| ns.is_multiple_of(*k)) {
            Some((k, unit)) if ns > 0 => write!(f, "{}{unit}", ns / k),
            _ => write!(f, "{ns}ns"),
        }
    }
);

unit_type!(
    Bytes,
    u64,
    "size in bytes (B, kB, MB, GB, KiB, MiB)",
    r"^[0-9.]+\s*(B|kB|KB|MB|GB|KiB|MiB)$",
    "1500B",
    |s: &str| {
        let v = scaled(s, SIZE_UNITS, "size")?;
        if v.fract() != 0.0 {
            return Err(format!("`{s}` is not a whole number of bytes"));
        }
        Ok(v as u64)
    },
    |v: u64, f: &mut fmt::Formatter<'_>| write!(f, "{v}B")
);

/// A queue limit: packets ("100pkt") or bytes ("150000B", "64KiB").
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueLimit {
    Packets(u64),
    Bytes(u64),
}

impl QueueLimit {
    /// Drop-tail: whether a queue of `packets` packets and `bytes()` bytes takes one more
    /// of `size` bytes. The bytes are asked for only against a limit in bytes (a wired
    /// direction sums them on demand: `link/wired.rs`).
    #[inline(always)]
    pub fn admits(self, packets: u64, bytes: impl FnOnce() -> u64, size: u32) -> bool {
        match self {
            QueueLimit::Packets(n) => packets < n,
            QueueLimit::Bytes(n) => bytes() + u64::from(size) <= n,
        }
    }
}

impl std::str::FromStr for QueueLimit {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (value, unit) = split_number(s)?;
        if unit == "pkt" || unit == "pkts" || unit == "packets" {
            if value.fract() != 0.0 {
                return Err(format!("`{s}` is not a whole number of packets"));
            }
            return Ok(QueueLimit::Packets(value as u64));
        }
        s.parse::<Bytes>().map(|b| QueueLimit::Bytes(b.0)).map_err(|_| {
            format!("`{s}` is not a queue limit: expected packets (\"100pkt\") or a size (\"150000B\", \"64KiB\")")
        })
    }
}
impl fmt::Display for QueueLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueLimit::Packets(n) => write!(f, "{n}pkt"),
            QueueLimit::Bytes(n) => write!(f, "{n}B"),
        }
    }
}
impl<'de> Deserialize<'de> for QueueLimit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}
impl Serialize for QueueLimit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
impl JsonSchema for QueueLimit {
    fn schema_name() -> String {
        "QueueLimit".into()
    }
    fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        let mut o = schemars::schema::SchemaObject {
            instance_type: Some(schemars::schema::InstanceType::String.into()),
            ..Default::default()
        };
        o.string().pattern = Some(r"^[0-9.]+\s*(pkt|pkts|packets|B|kB|KB|MB|GB|KiB|MiB)$".into());
        o.metadata().description = Some("A queue limit in packets (\"100pkt\") or bytes (\"150000B\").".into());
        o.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!("10Mbps".parse::<Rate>().unwrap().0, 10_000_000);
        assert_eq!("1.5 Mb/s".parse::<Rate>().unwrap().0, 1_500_000);
        assert_eq!("25ms".parse::<Duration>().unwrap().0, SimDur::from_millis(25));
        assert_eq!("0.5s".parse::<Duration>().unwrap().0, SimDur::from_millis(500));
        assert_eq!("1500B".parse::<Bytes>().unwrap().0, 1500);
        assert_eq!("64KiB".parse::<Bytes>().unwrap().0, 65536);
        assert_eq!("100pkt".parse::<QueueLimit>().unwrap(), QueueLimit::Packets(100));
        for text in ["100ms", "25s", "1500us", "7ns", "0ns"] {
            assert_eq!(text.parse::<Duration>().unwrap().to_string(), text);
        }
    }

    #[test]
    fn rejects_bad_units_with_the_allowed_list() {
        let e = "10Mbit".parse::<Rate>().unwrap_err();
        assert!(e.contains("Mbps"), "{e}");
        let e = "-5Mbps".parse::<Rate>().unwrap_err();
        assert!(e.contains("negative"), "{e}");
        assert!("25".parse::<Duration>().unwrap_err().contains("ms"));
        assert!("1.5B".parse::<Bytes>().is_err());
        assert!("0bps".parse::<Rate>().is_err());
    }
}
