//! Quantities a scenario may draw at random: a time (flow start, on and off periods,
//! gaps between arrivals) or a size (file transfers). Each is written either as a fixed
//! value (`"2s"`, `"1MB"`) or as a table naming a distribution
//! (`{ dist = "exponential", mean = "500ms" }`).
//!
//! Draws use inverse-transform sampling of `engine::rng::uniform`, our own code, so a
//! value depends only on the component's stream (seed, run, stream name), never on a
//! `rand` version's distribution code.

use super::units::{Bytes, Duration};
use super::ScenarioError;
use crate::engine::{uniform, Rng};
use schemars::JsonSchema;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;
use xlayer_proto::SimDur;

/// Draws past 100 years are cut to it, far from the u64-nanosecond limit of time.
const MAX_DRAW_NS: f64 = 100.0 * 365.0 * 86_400.0 * 1e9;
/// Sizes are cut to 1 TB.
const MAX_DRAW_BYTES: f64 = 1e12;

/// A time drawn from a distribution.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum TimeDist {
    /// Uniform on [`low`, `high`] (to the nanosecond).
    Uniform {
        /// Smallest value. Required.
        low: Duration,
        /// Largest value, at least `low`. Required.
        high: Duration,
    },
    /// Exponential with the given mean (a Poisson process's gaps). Draws are rounded to
    /// the nanosecond.
    Exponential {
        /// The mean, greater than 0s. Required.
        mean: Duration,
    },
    /// Pareto (type I): P(X > x) = (scale/x)^shape for x ≥ scale; heavy-tailed, with an
    /// infinite mean for shape ≤ 1 and the mean shape·scale/(shape − 1) above. Draws past
    /// 100 years are cut to 100 years.
    Pareto {
        /// Tail index α, greater than 0 (and at most 100). Required.
        shape: f64,
        /// The minimum value x_m, greater than 0s. Required.
        scale: Duration,
    },
}

/// A size drawn from a distribution. Draws are rounded up to whole bytes (at least 1B)
/// and cut to 1TB.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum SizeDist {
    /// Exponential with the given mean.
    Exponential {
        /// The mean, at least 1B. Required.
        mean: Bytes,
    },
    /// Pareto (type I): P(X > x) = (scale/x)^shape for x ≥ scale. The mean is
    /// shape·scale/(shape − 1) for shape > 1, infinite otherwise.
    Pareto {
        /// Tail index α, greater than 0 (and at most 100). Required.
        shape: f64,
        /// The minimum size x_m, at least 1B. Required.
        scale: Bytes,
    },
    /// Pareto with tail index `shape` truncated to [`min`, `max`] (the bounded Pareto
    /// of web and data-center workload models): inverse CDF
    /// x = min · (1 − u·(1 − (min/max)^shape))^(−1/shape).
    BoundedPareto {
        /// Tail index α, greater than 0 (and at most 100). Required.
        shape: f64,
        /// Smallest size, at least 1B. Required.
        min: Bytes,
        /// Largest size, greater than `min`. Required.
        max: Bytes,
    },
    /// An empirical CDF read from a text file: one point per line, "size probability"
    /// (separated by spaces, tabs or a comma), size in bytes, the cumulative probability
    /// P(X ≤ size) in [0, 1]; both columns non-decreasing, the last probability 1; '#'
    /// starts a comment. A draw interpolates linearly between points (below the first
    /// point's probability it is the first size), like ns-3's EmpiricalRandomVariable.
    /// A relative path is resolved against the scenario file's folder.
    Empirical {
        /// The CDF file. Required.
        file: String,
    },
}

macro_rules! fixed_or_random {
    ($(#[$doc:meta])* $name:ident, $fixed:ty, $dist:ty, $expect:literal) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
        #[serde(untagged)]
        pub enum $name {
            Fixed($fixed),
            Random($dist),
        }

        /// A string is the fixed value, a table names a distribution; each keeps its
        /// own error messages (an untagged derive would replace them with "did not
        /// match any variant").
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        s.parse().map($name::Fixed).map_err(E::custom)
                    }
                    fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<$name, A::Error> {
                        <$dist>::deserialize(de::value::MapAccessDeserializer::new(m)).map($name::Random)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

fixed_or_random!(
    /// A time: a fixed Duration string ("2s"), or a TimeDist table naming a distribution
    /// and its parameters (`{ dist = "uniform", low = "0s", high = "1s" }`).
    TimeSpec,
    Duration,
    TimeDist,
    "a duration like \"2s\" or a table like { dist = \"exponential\", mean = \"1s\" }"
);

fixed_or_random!(
    /// A size: a fixed Bytes string ("1MB"), or a SizeDist table naming a distribution
    /// and its parameters (`{ dist = "bounded_pareto", shape = 1.2, min = "1kB", max = "10MB" }`).
    SizeSpec,
    Bytes,
    SizeDist,
    "a size like \"1MB\" or a table like { dist = \"exponential\", mean = \"100kB\" }"
);

fn err(path: &str, field: &str, message: impl Into<String>) -> ScenarioError {
    ScenarioError::at(format!("{path}.{field}"), message)
}

fn check_shape(path: &str, shape: f64) -> Result<(), ScenarioError> {
    if shape > 0.0 && shape <= 100.0 {
        Ok(())
    } else {
        Err(err(path, "shape", format!("{shape} is out of range: it must be in (0, 100]")))
    }
}

impl TimeSpec {
    /// Whether a value is drawn (a fixed value draws nothing).
    pub fn is_random(&self) -> bool {
        matches!(self, TimeSpec::Random(_))
    }

    /// The smallest value it can take.
    pub fn min(&self) -> SimDur {
        match self {
            TimeSpec::Fixed(d) => d.0,
            TimeSpec::Random(TimeDist::Uniform { low, .. }) => low.0,
            TimeSpec::Random(TimeDist::Exponential { .. }) => SimDur::ZERO,
            TimeSpec::Random(TimeDist::Pareto { scale, .. }) => scale.0,
        }
    }

    /// Range checks; `path` names the field (e.g. `flow[0].start`).
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        match self {
            TimeSpec::Fixed(_) => Ok(()),
            TimeSpec::Random(TimeDist::Uniform { low, high }) if high.0 < low.0 => {
                Err(err(path, "high", format!("must be at least `low` ({low})")))
            }
            TimeSpec::Random(TimeDist::Exponential { mean }) if mean.0 == SimDur::ZERO => {
                Err(err(path, "mean", "must be greater than 0s"))
            }
            TimeSpec::Random(TimeDist::Pareto { shape, scale }) => {
                check_shape(path, *shape)?;
                if scale.0 == SimDur::ZERO {
                    return Err(err(path, "scale", "must be greater than 0s"));
                }
                Ok(())
            }
            TimeSpec::Random(_) => Ok(()),
        }
    }

    /// One value; `rng` is used only by a distribution.
    pub fn draw(&self, rng: &mut Rng) -> SimDur {
        let ns = match self {
            TimeSpec::Fixed(d) => return d.0,
            TimeSpec::Random(TimeDist::Uniform { low, high }) => {
                let span = (high.0 .0 - low.0 .0) as f64 + 1.0;
                return SimDur(low.0 .0 + ((uniform(rng) * span) as u64).min(high.0 .0 - low.0 .0));
            }
            TimeSpec::Random(TimeDist::Exponential { mean }) => exponential(rng, mean.0 .0 as f64),
            TimeSpec::Random(TimeDist::Pareto { shape, scale }) => pareto(rng, *shape, scale.0 .0 as f64),
        };
        SimDur(ns.min(MAX_DRAW_NS).round() as u64)
    }
}

/// −mean·ln(1 − u): u < 1, so the logarithm is finite.
fn exponential(rng: &mut Rng, mean: f64) -> f64 {
    -mean * (1.0 - uniform(rng)).ln()
}

/// scale·(1 − u)^(−1/shape).
fn pareto(rng: &mut Rng, shape: f64, scale: f64) -> f64 {
    scale * (1.0 - uniform(rng)).powf(-1.0 / shape)
}

/// An empirical CDF's points: (size in bytes, cumulative probability), both
/// non-decreasing, the last probability 1.
#[derive(Clone, Debug, PartialEq)]
pub struct Cdf(Vec<(f64, f64)>);

impl Cdf {
    /// Parse the text of a CDF file; errors name the line.
    pub fn parse(text: &str) -> Result<Cdf, String> {
        let mut points: Vec<(f64, f64)> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let at = |m: &str| format!("line {}: {m}", i + 1);
            let cols: Vec<&str> =
                line.split(|c: char| c == ',' || c.is_whitespace()).filter(|c| !c.is_empty()).collect();
            let [size, p] = cols[..] else {
                return Err(at(&format!("`{line}` must have two columns: size in bytes, cumulative probability")));
            };
            let size: f64 = size.parse().map_err(|_| at(&format!("size `{size}` is not a number")))?;
            let p: f64 = p.parse().map_err(|_| at(&format!("probability `{p}` is not a number")))?;
            if !(size.is_finite() && size >= 0.0) {
                return Err(at(&format!("size {size} must be zero or more")));
            }
            if !(0.0..=1.0).contains(&p) {
                return Err(at(&format!("probability {p} must be in [0, 1]")));
            }
            if let Some(&(s0, p0)) = points.last() {
                if size < s0 || p < p0 {
                    return Err(at("sizes and probabilities must not decrease"));
                }
            }
            points.push((size, p));
        }
        match points.last() {
            None => Err("no points: expected lines of \"size probability\"".into()),
            Some(&(_, p)) if p != 1.0 => Err(format!("the last probability is {p}; it must be 1")),
            _ => Ok(Cdf(points)),
        }
    }

    /// The size at cumulative probability `u`, interpolating linearly between points.
    fn quantile(&self, u: f64) -> f64 {
        let i = self.0.partition_point(|&(_, p)| p < u);
        match i {
            0 => self.0[0].0,
            _ => {
                let (s0, p0) = self.0[i - 1];
                let (s1, p1) = self.0[i.min(self.0.len() - 1)];
                if p1 > p0 {
                    s0 + (s1 - s0) * (u - p0) / (p1 - p0)
                } else {
                    s1
                }
            }
        }
    }
}

impl SizeSpec {
    pub fn is_random(&self) -> bool {
        matches!(self, SizeSpec::Random(_))
    }

    /// The CDF file it names, if any.
    pub fn file(&self) -> Option<&str> {
        match self {
            SizeSpec::Random(SizeDist::Empirical { file }) => Some(file),
            _ => None,
        }
    }

    /// Range checks (the CDF file is read and checked by the caller, which knows the
    /// scenario's folder); `path` names the field (e.g. `flow[0].app.size`).
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let at_least_1b = |field: &str, b: &Bytes| match b.0 {
            0 => Err(err(path, field, "must be at least 1B")),
            _ => Ok(()),
        };
        match self {
            SizeSpec::Fixed(b) if b.0 == 0 => Err(ScenarioError::at(path, "must be at least 1B")),
            SizeSpec::Fixed(_) => Ok(()),
            SizeSpec::Random(SizeDist::Exponential { mean }) => at_least_1b("mean", mean),
            SizeSpec::Random(SizeDist::Pareto { shape, scale }) => {
                check_shape(path, *shape)?;
                at_least_1b("scale", scale)
            }
            SizeSpec::Random(SizeDist::BoundedPareto { shape, min, max }) => {
                check_shape(path, *shape)?;
                at_least_1b("min", min)?;
                if max.0 <= min.0 {
                    return Err(err(path, "max", format!("must be greater than `min` ({min})")));
                }
                Ok(())
            }
            SizeSpec::Random(SizeDist::Empirical { .. }) => Ok(()),
        }
    }

    /// One size in bytes; `cdf` is the loaded file of an empirical distribution.
    pub fn draw(&self, rng: &mut Rng, cdf: Option<&Cdf>) -> u64 {
        let x = match self {
            SizeSpec::Fixed(b) => return b.0,
            SizeSpec::Random(SizeDist::Exponential { mean }) => exponential(rng, mean.0 as f64),
            SizeSpec::Random(SizeDist::Pareto { shape, scale }) => pareto(rng, *shape, scale.0 as f64),
            SizeSpec::Random(SizeDist::BoundedPareto { shape, min, max }) => {
                let (l, h, a) = (min.0 as f64, max.0 as f64, *shape);
                let x = l * (1.0 - uniform(rng) * (1.0 - (l / h).powf(a))).powf(-1.0 / a);
                x.min(h)
            }
            SizeSpec::Random(SizeDist::Empirical { .. }) => {
                cdf.expect("the builder loads the CDF file").quantile(uniform(rng))
            }
        };
        x.ceil().clamp(1.0, MAX_DRAW_BYTES) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    fn mean(n: usize, mut f: impl FnMut() -> f64) -> f64 {
        (0..n).map(|_| f()).sum::<f64>() / n as f64
    }

    #[test]
    fn parses_fixed_strings_and_tables() {
        let t: TimeSpec = serde_json::from_str("\"2s\"").unwrap();
        assert_eq!(t, TimeSpec::Fixed(Duration(SimDur::from_secs(2))));
        let t: TimeSpec = serde_json::from_str(r#"{"dist":"exponential","mean":"500ms"}"#).unwrap();
        assert_eq!(t, TimeSpec::Random(TimeDist::Exponential { mean: Duration(SimDur::from_millis(500)) }));
        let e = serde_json::from_str::<TimeSpec>(r#"{"dist":"normal"}"#).unwrap_err().to_string();
        assert!(e.contains("unknown variant `normal`"), "{e}");
        let e = serde_json::from_str::<SizeSpec>("\"2 parsecs\"").unwrap_err().to_string();
        assert!(e.contains("not a size"), "{e}");
        assert_eq!(serde_json::to_string(&t).unwrap(), r#"{"dist":"exponential","mean":"500ms"}"#);
    }

    #[test]
    fn time_draws_have_their_distributions_means() {
        let mut r = stream(1, 0, "t");
        let exp = TimeSpec::Random(TimeDist::Exponential { mean: Duration(SimDur::from_millis(500)) });
        let m = mean(100_000, || exp.draw(&mut r).0 as f64);
        assert!((m / 5e8 - 1.0).abs() < 0.01, "{m}");
        let uni = TimeSpec::Random(TimeDist::Uniform {
            low: Duration(SimDur::from_millis(100)),
            high: Duration(SimDur::from_millis(300)),
        });
        let draws: Vec<u64> = (0..100_000).map(|_| uni.draw(&mut r).0).collect();
        assert!(draws.iter().all(|&d| (100_000_000..=300_000_000).contains(&d)));
        let m = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
        assert!((m / 2e8 - 1.0).abs() < 0.005, "{m}");
        let par = TimeSpec::Random(TimeDist::Pareto { shape: 3.0, scale: Duration(SimDur::from_millis(10)) });
        let m = mean(200_000, || par.draw(&mut r).0 as f64);
        assert!((m / 1.5e7 - 1.0).abs() < 0.02, "{m}"); // 3·10 ms / 2
    }

    #[test]
    fn size_draws_have_their_distributions_means() {
        let mut r = stream(1, 0, "s");
        let bp = SizeSpec::Random(SizeDist::BoundedPareto { shape: 1.5, min: Bytes(1000), max: Bytes(1_000_000) });
        let draws: Vec<u64> = (0..200_000).map(|_| bp.draw(&mut r, None)).collect();
        assert!(draws.iter().all(|&d| (1000..=1_000_000).contains(&d)));
        // E[X] = L^a/(1-(L/H)^a) · a/(a-1) · (L^(1-a) - H^(1-a)).
        let (l, h, a) = (1e3f64, 1e6f64, 1.5f64);
        let expect = l.powf(a) / (1.0 - (l / h).powf(a)) * a / (a - 1.0) * (l.powf(1.0 - a) - h.powf(1.0 - a));
        let m = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
        assert!((m / expect - 1.0).abs() < 0.03, "{m} vs {expect}");
        let exp = SizeSpec::Random(SizeDist::Exponential { mean: Bytes(10_000) });
        let m = mean(100_000, || exp.draw(&mut r, None) as f64);
        assert!((m / 10_000.5 - 1.0).abs() < 0.01, "{m}"); // ceil adds half a byte
    }

    #[test]
    fn empirical_cdf_interpolates_and_checks_its_file() {
        let cdf = Cdf::parse("# size p\n1000 0.5\n2000, 0.5\n3000\t1\n").unwrap();
        assert_eq!(cdf.quantile(0.0), 1000.0);
        assert_eq!(cdf.quantile(0.5), 1000.0);
        assert_eq!(cdf.quantile(0.75), 2500.0);
        let spec = SizeSpec::Random(SizeDist::Empirical { file: "x".into() });
        let mut r = stream(1, 0, "e");
        let m = mean(100_000, || spec.draw(&mut r, Some(&cdf)) as f64);
        assert!((m / 1750.0 - 1.0).abs() < 0.01, "{m}");
        assert_eq!(Cdf::parse("1 0.5\n2 0.4\n3 1").unwrap_err(), "line 2: sizes and probabilities must not decrease");
        assert_eq!(Cdf::parse("1 0.5").unwrap_err(), "the last probability is 0.5; it must be 1");
        assert!(Cdf::parse("1 0.5 7").unwrap_err().starts_with("line 1: `1 0.5 7` must have two columns"));
        assert!(Cdf::parse("").is_err());
    }
}
