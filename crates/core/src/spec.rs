//! Scheduler SPECs: `NAME[:key=value,...]`, e.g. `as-aged-sptf`, `as-stride:tau=500ms`,
//! `bfq:slice_idle=4ms`. Durations take units (`ns`, `us`, `ms`, `s`).

use std::fmt;

use crate::request::Nanos;

/// A parsed SPEC: the scheduler's name and its tunables as given, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    pub name: String,
    pub params: Vec<(String, String)>,
}

/// Why a SPEC could not be used. Every message says what would be valid.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SpecError {
    #[error("empty scheduler name in spec {spec:?}; the form is NAME[:key=value,...]")]
    EmptyName { spec: String },
    #[error("{spec:?}: tunable {item:?} has no '='; the form is NAME:key=value,key=value")]
    MissingEquals { spec: String, item: String },
    #[error("{spec:?}: tunable {key:?} is given twice")]
    Duplicate { spec: String, key: String },
    #[error("unknown scheduler {name:?}; valid schedulers: {}", valid.join(", "))]
    UnknownScheduler { name: String, valid: Vec<String> },
    #[error("scheduler {scheduler} has no tunable {key:?}; its tunables: {}", if valid.is_empty() { "none".to_string() } else { valid.join(", ") })]
    UnknownTunable {
        scheduler: String,
        key: String,
        valid: Vec<String>,
    },
    #[error("{scheduler}: {key}={value:?} is not valid: expected {expected}")]
    BadValue {
        scheduler: String,
        key: String,
        value: String,
        expected: String,
    },
    #[error("{scheduler}: {message}")]
    Build { scheduler: String, message: String },
}

impl Spec {
    pub fn parse(spec: &str) -> Result<Self, SpecError> {
        let spec = spec.trim();
        let (name, rest) = match spec.split_once(':') {
            Some((n, r)) => (n.trim(), Some(r)),
            None => (spec, None),
        };
        if name.is_empty() {
            return Err(SpecError::EmptyName { spec: spec.into() });
        }
        let mut params: Vec<(String, String)> = Vec::new();
        for item in rest.into_iter().flat_map(|r| r.split(',')) {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let Some((k, v)) = item.split_once('=') else {
                return Err(SpecError::MissingEquals {
                    spec: spec.into(),
                    item: item.into(),
                });
            };
            let (k, v) = (k.trim(), v.trim());
            if params.iter().any(|(pk, _)| pk == k) {
                return Err(SpecError::Duplicate {
                    spec: spec.into(),
                    key: k.into(),
                });
            }
            params.push((k.into(), v.into()));
        }
        Ok(Self {
            name: name.to_string(),
            params,
        })
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        for (i, (k, v)) in self.params.iter().enumerate() {
            write!(f, "{}{k}={v}", if i == 0 { ':' } else { ',' })?;
        }
        Ok(())
    }
}

/// Parses a duration with a unit: `250us`, `6.7ms`, `1s`, `500ns`; a bare `0` is zero.
pub fn parse_duration(s: &str) -> Result<Nanos, String> {
    let s = s.trim();
    if s == "0" {
        return Ok(0); // zero needs no unit
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("{s:?} has no unit; add one of ns, us, ms, s"))?;
    if split == 0 {
        return Err(format!(
            "{s:?} is not a duration: a number of 0 or more with a unit (ns, us, ms, s), as in 500us"
        ));
    }
    let (num, unit) = s.split_at(split);
    let scale = match unit.trim() {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        u => return Err(format!("unknown unit {u:?}; use ns, us, ms or s")),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("{num:?} is not a number"))?;
    let ns = v * scale;
    if !ns.is_finite() || ns > u64::MAX as f64 / 2.0 {
        return Err(format!("{s:?} is out of range"));
    }
    Ok(ns.round() as Nanos)
}

/// Formats a duration the way [`parse_duration`] reads it back, in the largest exact unit.
pub fn format_duration(ns: Nanos) -> String {
    if ns == 0 {
        "0".into()
    } else if ns % 1_000_000_000 == 0 {
        format!("{}s", ns / 1_000_000_000)
    } else if ns % 1_000_000 == 0 {
        format!("{}ms", ns / 1_000_000)
    } else if ns % 1_000 == 0 {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_name_and_tunables() {
        let s = Spec::parse("as-stride:tau=500ms, think_threshold=2ms").unwrap();
        assert_eq!(s.name, "as-stride");
        assert_eq!(
            s.params,
            vec![
                ("tau".to_string(), "500ms".to_string()),
                ("think_threshold".to_string(), "2ms".to_string())
            ]
        );
        assert_eq!(s.to_string(), "as-stride:tau=500ms,think_threshold=2ms");
        assert_eq!(Spec::parse("sptf").unwrap().params, vec![]);
    }

    #[test]
    fn rejects_malformed_specs() {
        assert!(matches!(
            Spec::parse(":x=1"),
            Err(SpecError::EmptyName { .. })
        ));
        assert!(matches!(
            Spec::parse("sptf:depth"),
            Err(SpecError::MissingEquals { .. })
        ));
        assert!(matches!(
            Spec::parse("sptf:depth=1,depth=2"),
            Err(SpecError::Duplicate { .. })
        ));
    }

    #[test]
    fn durations_need_units() {
        assert_eq!(parse_duration("6.7ms"), Ok(6_700_000));
        assert_eq!(parse_duration("50us"), Ok(50_000));
        assert_eq!(parse_duration("1s"), Ok(1_000_000_000));
        assert!(parse_duration("8").unwrap_err().contains("no unit"));
        assert!(parse_duration("8min").unwrap_err().contains("unknown unit"));
        assert!(parse_duration("x ms").is_err());
        assert!(parse_duration("-1s")
            .unwrap_err()
            .contains("not a duration"));
        assert_eq!(format_duration(500_000), "500us");
        assert_eq!(format_duration(1_500_000), "1500us");
    }
}
