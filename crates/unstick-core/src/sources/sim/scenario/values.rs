//! The range-checked values of scenario files: durations ([`Ago`]), `speed`, `size_mib` and the
//! scenario `name` (which names a directory). Every limit is checked where the value is read, so
//! nothing later (jiff's timestamp arithmetic, the simulated clock) can overflow or panic.

use serde::Deserialize;

/// A duration as written in scenarios: `90s`, `5m`, `2h`, `30d` (a bare number is seconds),
/// between 0 and [`MAX_AGO_SECONDS`] (ten years: every timestamp the simulation derives from it
/// stays far inside jiff's range).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ago(pub i64);

/// The longest [`Ago`]: 3650 days, in seconds.
pub const MAX_AGO_SECONDS: i64 = 3650 * 86_400;

impl<'de> Deserialize<'de> for Ago {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Ago;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a duration: a string like \"90s\", \"5m\", \"2h\", \"30d\" or a number of seconds")
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Ago, E> {
                check_ago(n).map(Ago).map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Ago, E> {
                check_ago(i64::try_from(n).unwrap_or(i64::MAX)).map(Ago).map_err(E::custom)
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Ago, E> {
                parse_duration(s).and_then(check_ago).map(Ago).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

fn check_ago(n: i64) -> Result<i64, String> {
    if (0..=MAX_AGO_SECONDS).contains(&n) {
        Ok(n)
    } else {
        Err(format!("{n} s is out of range: a duration must be between 0s and 3650d"))
    }
}

/// Parses `90s`, `5m`, `2h`, `30d` or `120` into seconds. Errors: not a number and unit, or a
/// number too large for seconds in an `i64` (the caller range-checks the result).
pub fn parse_duration(s: &str) -> Result<i64, String> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let shown = crate::text::sanitize(s);
    let n: i64 = num.parse().map_err(|_| format!("{shown:?} is not a duration (90s, 5m, 2h, 30d)"))?;
    let mult = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("{shown:?} has an unknown unit (use s, m, h or d)")),
    };
    n.checked_mul(mult).ok_or_else(|| format!("{shown:?} is out of range: a duration must be between 0s and 3650d"))
}

/// The largest `[[volume]] size_mib`: 16 TiB.
pub const MAX_SIZE_MIB: u64 = 16 << 20;

/// The fastest simulated time: 1000 simulated seconds per real second.
pub const MAX_SPEED: f64 = 1000.0;

/// Checks a `speed` (file or `--speed`): a finite number between 0 and [`MAX_SPEED`].
pub fn check_speed(x: f64) -> Result<(), String> {
    if x.is_finite() && (0.0..=MAX_SPEED).contains(&x) {
        Ok(())
    } else {
        Err(format!("must be a number between 0 and {MAX_SPEED}"))
    }
}

/// True for scenario names that can name a directory: 1 to 64 of `[A-Za-z0-9._-]`, not
/// starting with `.` (so never `..`, never a path separator).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}
