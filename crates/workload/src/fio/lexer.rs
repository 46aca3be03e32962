//! Lines to items: section headers and `key=value` entries, each with its line number.
//!
//! This layer knows fio's INI dialect and nothing about what options mean:
//!
//! - `;` and `#` start a comment that runs to the end of the line, whether the line starts with
//!   it or it follows a value (fio strips both forms). A consequence, as in fio: a value cannot
//!   contain `;` or `#`.
//! - Blank lines are skipped; leading and trailing white space is ignored everywhere, so
//!   `key=value` and `key = value` are the same.
//! - `[name]` starts a section. `[global]` is the only special name (exact, case-sensitive, as
//!   in fio).
//! - `key=value` is an entry; a line with no `=` is a valueless entry (`time_based`). Whether a
//!   valueless entry is allowed is the option table's business, not this layer's.
//! - fio's `include FILE` directive is reported, not followed.
//!
//! Entries before the first header are an error here, because no later layer could say which
//! section they belong to.

use super::error::{ErrorKind, FioError};

/// One meaningful line of a job file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Item<'a> {
    /// `[name]`.
    Section { name: &'a str, line: u32 },
    /// `key=value` or a valueless `key`.
    Entry(Entry<'a>),
}

/// `key=value` (value trimmed, comments removed) or a valueless `key`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry<'a> {
    pub key: &'a str,
    pub value: Option<&'a str>,
    pub line: u32,
}

/// Splits `text` into items, in file order.
pub(crate) fn lex<'a>(text: &'a str, origin: &str) -> Result<Vec<Item<'a>>, FioError> {
    let mut items = Vec::new();
    let mut in_section = false;
    for (index, raw) in text.lines().enumerate() {
        // A job file longer than 4 billion lines is not a job file; saturate rather than wrap
        // so a line number is never wrong by wrapping.
        let line = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let raw = if index == 0 {
            raw.strip_prefix('\u{feff}').unwrap_or(raw)
        } else {
            raw
        };
        let content = strip_comment(raw).trim();
        if content.is_empty() {
            continue;
        }
        if content.starts_with('[') {
            let name = section_name(content).map_err(|kind| FioError::new(origin, line, kind))?;
            in_section = true;
            items.push(Item::Section { name, line });
            continue;
        }
        if content == "include"
            || content.starts_with("include ")
            || content.starts_with("include\t")
        {
            return Err(FioError::new(origin, line, ErrorKind::Include));
        }
        let (key, value) = match content.split_once('=') {
            Some((key, value)) => (key.trim(), Some(value.trim())),
            None => (content, None),
        };
        if key.is_empty() {
            return Err(FioError::new(
                origin,
                line,
                ErrorKind::MissingOptionName {
                    text: content.to_owned(),
                },
            ));
        }
        if !in_section {
            return Err(FioError::new(
                origin,
                line,
                ErrorKind::OutsideSection {
                    option: key.to_owned(),
                },
            ));
        }
        items.push(Item::Entry(Entry { key, value, line }));
    }
    Ok(items)
}

/// The line up to its first `;` or `#`.
fn strip_comment(line: &str) -> &str {
    match line.find([';', '#']) {
        Some(at) => &line[..at],
        None => line,
    }
}

/// The name inside `[name]`, trimmed. `header` is trimmed and starts with `[`.
fn section_name(header: &str) -> Result<&str, ErrorKind> {
    let Some(close) = header.find(']') else {
        return Err(ErrorKind::UnclosedSection {
            header: header.to_owned(),
        });
    };
    let bad = |reason: &str| ErrorKind::BadSection {
        header: header.to_owned(),
        reason: reason.to_owned(),
    };
    if close + 1 != header.len() {
        return Err(bad(
            "text after `]`; a header is only `[name]` (comments start with `#` or `;`)",
        ));
    }
    let name = header[1..close].trim();
    if name.is_empty() {
        return Err(bad(
            "the section has no name; write `[global]` or `[job-name]`",
        ));
    }
    if name.contains('[') {
        return Err(bad("`[` inside a section name; write `[name]`"));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: &str, value: Option<&str>, line: u32) -> Item<'static> {
        // Leak is fine in a test: the strings are tiny and the process ends.
        let key: &'static str = Box::leak(key.to_owned().into_boxed_str());
        let value: Option<&'static str> = value.map(|v| &*Box::leak(v.to_owned().into_boxed_str()));
        Item::Entry(Entry { key, value, line })
    }

    #[test]
    fn sections_entries_comments_and_blank_lines() {
        let text = "; leading comment\n\n[global]\nbs = 4k  # trailing\n# whole line\n\
                    [job1]\ntime_based\r\nrw=read;comment\n";
        let items = lex(text, "t").unwrap();
        assert_eq!(
            items,
            vec![
                Item::Section {
                    name: "global",
                    line: 3
                },
                entry("bs", Some("4k"), 4),
                Item::Section {
                    name: "job1",
                    line: 6
                },
                entry("time_based", None, 7),
                entry("rw", Some("read"), 8),
            ]
        );
    }

    #[test]
    fn value_keeps_later_equals_signs() {
        let items = lex("[j]\ndescription=a=b\n", "t").unwrap();
        assert_eq!(items[1], entry("description", Some("a=b"), 2));
    }

    #[test]
    fn empty_value_is_some_empty() {
        let items = lex("[j]\nbs=\n", "t").unwrap();
        assert_eq!(items[1], entry("bs", Some(""), 2));
    }

    #[test]
    fn option_before_any_section() {
        let e = lex("# c\nbs=4k\n[j]\n", "f.fio").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(matches!(e.kind, ErrorKind::OutsideSection { ref option } if option == "bs"));
    }

    #[test]
    fn header_errors() {
        let e = lex("[global\n", "f").unwrap_err();
        assert_eq!(
            (e.line, matches!(e.kind, ErrorKind::UnclosedSection { .. })),
            (1, true)
        );
        let e = lex("[]\n", "f").unwrap_err();
        assert!(matches!(e.kind, ErrorKind::BadSection { .. }));
        let e = lex("[a] b\n", "f").unwrap_err();
        assert!(matches!(e.kind, ErrorKind::BadSection { .. }));
        let e = lex("[a[b]\n", "f").unwrap_err();
        assert!(matches!(e.kind, ErrorKind::BadSection { .. }));
        // A comment after the header is fine.
        assert_eq!(
            lex("[a] ; c\n", "f").unwrap(),
            vec![Item::Section { name: "a", line: 1 }]
        );
    }

    #[test]
    fn include_and_missing_key() {
        let e = lex("[j]\ninclude other.fio\n", "f").unwrap_err();
        assert_eq!((e.line, e.kind), (2, ErrorKind::Include));
        let e = lex("[j]\n=4k\n", "f").unwrap_err();
        assert!(matches!(e.kind, ErrorKind::MissingOptionName { .. }));
    }

    #[test]
    fn byte_order_mark_is_ignored() {
        let items = lex("\u{feff}[j]\n", "f").unwrap();
        assert_eq!(items, vec![Item::Section { name: "j", line: 1 }]);
    }
}
