//! The one clock of a run: `SOURCE_DATE_EPOCH` when set (reproducible reports and SBOMs, and
//! exception expiry judged on the build's date), else the system clock.
//!
//! Read once, at the start of a command, so every output of one run agrees on the time. An
//! invalid `SOURCE_DATE_EPOCH` is an error, not a silent fallback: a reproducible build that
//! quietly used the wall clock would produce a different SBOM and nobody would know why.

use time::{Date, OffsetDateTime};

/// A fixed instant for one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    now: OffsetDateTime,
    reproducible: bool,
}

/// `SOURCE_DATE_EPOCH` was set but is not a Unix timestamp.
#[derive(Debug, thiserror::Error)]
#[error(
    "SOURCE_DATE_EPOCH must be a whole number of seconds since 1970-01-01 (got `{value}`); \
     unset it to use the system clock"
)]
pub struct ClockError {
    /// The value as found (escaped for display).
    pub value: String,
}

impl Clock {
    /// The clock for this process: `SOURCE_DATE_EPOCH` when set and non-empty, else now (UTC).
    pub fn from_env() -> Result<Clock, ClockError> {
        match std::env::var_os("SOURCE_DATE_EPOCH") {
            None => Ok(Clock::system()),
            Some(v) if v.is_empty() => Ok(Clock::system()),
            Some(v) => {
                let text = v.to_string_lossy();
                Clock::from_epoch_text(&text).ok_or_else(|| ClockError {
                    value: text.escape_debug().take(40).collect(),
                })
            }
        }
    }

    /// Parses a `SOURCE_DATE_EPOCH` value (decimal seconds, surrounding spaces allowed).
    pub fn from_epoch_text(text: &str) -> Option<Clock> {
        let secs = text.trim().parse::<i64>().ok()?;
        let now = OffsetDateTime::from_unix_timestamp(secs).ok()?;
        Some(Clock {
            now,
            reproducible: true,
        })
    }

    /// The system clock, now.
    pub fn system() -> Clock {
        Clock {
            now: OffsetDateTime::now_utc(),
            reproducible: false,
        }
    }

    /// A fixed instant (tests, library users).
    pub fn fixed(now: OffsetDateTime) -> Clock {
        Clock {
            now,
            reproducible: true,
        }
    }

    /// The instant.
    pub fn now(&self) -> OffsetDateTime {
        self.now
    }

    /// The date used for exception expiry.
    pub fn today(&self) -> Date {
        self.now.date()
    }

    /// Whether the instant came from `SOURCE_DATE_EPOCH` (or was fixed by the caller).
    pub fn is_reproducible(&self) -> bool {
        self.reproducible
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_epoch_seconds() {
        let c = Clock::from_epoch_text(" 86400 ").unwrap();
        assert_eq!(c.today().to_string(), "1970-01-02");
        assert!(c.is_reproducible());
    }

    #[test]
    fn rejects_what_is_not_a_timestamp() {
        for bad in ["", "yesterday", "1.5", "99999999999999999999", "1e9"] {
            assert!(Clock::from_epoch_text(bad).is_none(), "{bad}");
        }
    }
}
