//! Errors of the job-file parser.
//!
//! Every error carries the file it came from and the line it is about, and displays as
//! `FILE:LINE: message`, the shape compilers use, so editors and terminals can jump to it. The
//! message always says what would have been valid: a user who wrote a job file for fio should be
//! able to fix it from the message alone.

use std::fmt;

/// A job file that could not be read, parsed or resolved.
///
/// `line` is 1-based. It is 0 only for errors about the file as a whole (it could not be read,
/// or it defines no job), and then the display leaves the line out (`FILE: message`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}: {kind}", Location { origin: &self.origin, line: self.line })]
pub struct FioError {
    /// Where the text came from: the path given to [`JobFile::load`](super::JobFile::load), or
    /// the `origin` given to [`parse`](super::parse).
    pub origin: String,
    /// The line the error is about (1-based), or 0 for the whole file.
    pub line: u32,
    /// What went wrong.
    pub kind: ErrorKind,
}

impl FioError {
    pub(crate) fn new(origin: &str, line: u32, kind: ErrorKind) -> Self {
        FioError {
            origin: origin.to_owned(),
            line,
            kind,
        }
    }

    /// The option the error is about, when it is about one (canonical name or as written).
    pub fn option(&self) -> Option<&str> {
        self.kind.option()
    }
}

/// `FILE:LINE`, or just `FILE` for line 0.
struct Location<'a> {
    origin: &'a str,
    line: u32,
}

impl fmt::Display for Location<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.origin)
        } else {
            write!(f, "{}:{}", self.origin, self.line)
        }
    }
}

/// What went wrong, without the location. Each variant's message names the option (or the
/// section) and says what would be valid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file could not be read.
    #[error("cannot read the job file: {message}")]
    Io {
        /// The operating system's message.
        message: String,
    },

    /// The file has no job section (only comments, options, or `[global]`).
    #[error("no job defined: add a section such as `[reader]` after any `[global]` section")]
    NoJobs,

    /// An option appears before the first `[section]` header.
    #[error(
        "option `{option}` is outside of any section; put it under `[global]` (for every job \
         below) or under a `[job-name]` header"
    )]
    OutsideSection {
        /// The option as written.
        option: String,
    },

    /// A line starts with `[` but has no closing `]`.
    #[error("section header `{header}` is missing its closing `]`; write `[name]`")]
    UnclosedSection {
        /// The line as written (comments removed).
        header: String,
    },

    /// A section header is malformed in another way (empty name, text after `]`, nested
    /// brackets).
    #[error("bad section header `{header}`: {reason}")]
    BadSection {
        /// The line as written (comments removed).
        header: String,
        /// What is wrong and what to write instead.
        reason: String,
    },

    /// A line such as `=4k` that has a value but no option name.
    #[error("`{text}` has no option name before `=`; write `option=value`")]
    MissingOptionName {
        /// The line as written (comments removed).
        text: String,
    },

    /// fio's `include FILE` directive.
    #[error(
        "`include` is not supported: antsched reads one self-contained job file; paste the \
         included options into this file"
    )]
    Include,

    /// An option neither fio nor antsched knows.
    #[error("unknown option `{option}`{hint}")]
    UnknownOption {
        /// The option as written.
        option: String,
        /// A suggestion, starting with `; ` (or empty).
        hint: String,
    },

    /// A real fio option that is outside antsched's subset.
    #[error("`{option}` is a fio option that antsched does not support{hint}")]
    UnsupportedOption {
        /// The option as written.
        option: String,
        /// What to do instead, starting with `; ` (or a generic pointer to the docs).
        hint: String,
    },

    /// An option that needs a value was given without one.
    #[error("option `{option}` needs a value, for example `{example}`")]
    MissingValue {
        /// Canonical option name.
        option: String,
        /// A valid line for this option.
        example: String,
    },

    /// The value does not parse or is out of range.
    #[error("invalid value `{value}` for `{option}`: {reason}")]
    InvalidValue {
        /// Canonical option name.
        option: String,
        /// The value as written.
        value: String,
        /// Why, and what would be valid.
        reason: String,
    },

    /// A job's options contradict each other, or contradict another job's.
    #[error("job `{job}`: `{option}` {reason}")]
    Conflict {
        /// The job (its section name).
        job: String,
        /// Canonical name of the option at the reported line.
        option: String,
        /// Why, and what would be valid.
        reason: String,
    },

    /// A job says nothing about how much I/O to do or over which region.
    #[error(
        "job `{job}` has no size: give `size=` (for example `size=1g`), or `filesize=` with \
         `nrfiles=`, or `io_size=`/`number_ios=` with a device `filename=/dev/...`, or \
         `runtime=` with `time_based`"
    )]
    MissingSize {
        /// The job (its section name).
        job: String,
    },

    /// A problem found after parsing, by a user of the model (for example the simulator:
    /// "size is larger than the device"). Built by [`JobFile::error_at`](super::JobFile::error_at).
    #[error("job `{job}`: {message}")]
    Semantic {
        /// The job (its section name).
        job: String,
        /// Canonical option name the line belongs to, if any.
        option: Option<String>,
        /// What is wrong and what would be valid.
        message: String,
    },
}

impl ErrorKind {
    /// The option this error is about, if any.
    pub fn option(&self) -> Option<&str> {
        match self {
            ErrorKind::OutsideSection { option }
            | ErrorKind::UnknownOption { option, .. }
            | ErrorKind::UnsupportedOption { option, .. }
            | ErrorKind::MissingValue { option, .. }
            | ErrorKind::InvalidValue { option, .. }
            | ErrorKind::Conflict { option, .. } => Some(option),
            ErrorKind::Semantic { option, .. } => option.as_deref(),
            ErrorKind::Io { .. }
            | ErrorKind::NoJobs
            | ErrorKind::UnclosedSection { .. }
            | ErrorKind::BadSection { .. }
            | ErrorKind::MissingOptionName { .. }
            | ErrorKind::Include
            | ErrorKind::MissingSize { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_file_line_message() {
        let e = FioError::new(
            "jobs.fio",
            7,
            ErrorKind::InvalidValue {
                option: "bs".into(),
                value: "3".into(),
                reason: "must be a multiple of 512".into(),
            },
        );
        assert_eq!(
            e.to_string(),
            "jobs.fio:7: invalid value `3` for `bs`: must be a multiple of 512"
        );
        assert_eq!(e.option(), Some("bs"));
    }

    #[test]
    fn whole_file_errors_leave_the_line_out() {
        let e = FioError::new("jobs.fio", 0, ErrorKind::NoJobs);
        assert!(e.to_string().starts_with("jobs.fio: no job defined"), "{e}");
        assert_eq!(e.option(), None);
    }
}
