//! A reader for DiskSim 4.0's parameter syntax (the `libparam` language).
//!
//! A DiskSim parameter file is a sequence of top-level statements:
//!
//! ```text
//! # a comment runs to the end of the line
//! disksim_disk NAME { Key with spaces = 1.5, Other key = word, Nested = TYPE { ... }, List = [ 1, 2 ] }
//! source other-file.diskspecs
//! instantiate [ disk0 ] as NAME
//! topology disksim_iodriver driver0 [ disksim_bus bus0 [ ... ] ]
//! ```
//!
//! A value is a number, a bare word, a block `TYPE { ... }`, a list `[ v, v, ... ]`, or
//! `source FILE`, which stands for the one block defined in FILE (that is how a `.diskspecs`
//! names its `.model`). Keys are everything before `=` (they contain spaces, dots, slashes and
//! parentheses). Every parsed item keeps its file and line so that the importer can say where
//! a bad parameter is.

use std::cell::Cell;
use std::path::{Path, PathBuf};

use super::DiskSimError;

/// Where something was read: a file and a 1-based line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pos {
    pub file: PathBuf,
    pub line: usize,
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// A parameter value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A number (DiskSim does not distinguish integers in the syntax; the importer does).
    Number(f64),
    /// A bare word, such as `extracted` or a file name.
    Word(String),
    /// A typed block: `TYPE { ... }` (or the block a `source FILE` stood for).
    Block(Block),
    /// A list: `[ ... ]`.
    List(Vec<(Value, Pos)>),
}

/// A block: its type word, optional name (top-level blocks have one), and its parameters in
/// file order.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub kind: String,
    pub name: Option<String>,
    pub params: Vec<Param>,
    pub pos: Pos,
}

/// One `key = value` inside a block.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub key: String,
    pub value: Value,
    pub pos: Pos,
}

/// A top-level statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    Block(Block),
    Instantiate {
        names: Vec<String>,
        kind: String,
        pos: Pos,
    },
    Topology {
        pos: Pos,
    },
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(String),
    Number(f64),
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Comma,
    Eq,
}

struct Lexer {
    toks: Vec<(Tok, usize)>,
    i: usize,
    file: PathBuf,
    last_line: usize,
    /// Blocks and lists open around the token being read.
    nest: usize,
}

/// How deep blocks and lists may nest in one file. Real models nest three or four levels;
/// the parser recurses per level, and a file of ten thousand `[` must be an error, not a
/// stack overflow.
const MAX_NEST: usize = 64;

/// How many files one model may read through `source`, counting every read. Nesting alone is
/// capped at 16, but a file that sources another four times, fourteen levels deep, would read
/// 4^14 files and never finish.
const MAX_SOURCE_READS: usize = 1024;

fn is_word_char(c: char) -> bool {
    !c.is_whitespace() && !matches!(c, '{' | '}' | '[' | ']' | ',' | '=' | '#')
}

fn lex(text: &str, file: &Path) -> Lexer {
    let mut toks = Vec::new();
    let mut last_line = 1;
    for (ln, line) in text.lines().enumerate() {
        let line_no = ln + 1;
        last_line = line_no;
        let line = match line.find('#') {
            Some(i) => &line[..i],
            None => line,
        };
        let mut chars = line.char_indices().peekable();
        while let Some(&(i, c)) = chars.peek() {
            match c {
                '{' => toks.push((Tok::LBrace, line_no)),
                '}' => toks.push((Tok::RBrace, line_no)),
                '[' => toks.push((Tok::LBracket, line_no)),
                ']' => toks.push((Tok::RBracket, line_no)),
                ',' => toks.push((Tok::Comma, line_no)),
                '=' => toks.push((Tok::Eq, line_no)),
                c if c.is_whitespace() => {}
                _ => {
                    let mut end = i;
                    while let Some(&(j, c2)) = chars.peek() {
                        if is_word_char(c2) {
                            end = j + c2.len_utf8();
                            chars.next();
                        } else {
                            break;
                        }
                    }
                    let w = &line[i..end];
                    let tok = match w.parse::<f64>() {
                        Ok(v) if looks_numeric(w) => Tok::Number(v),
                        _ => Tok::Word(w.to_string()),
                    };
                    toks.push((tok, line_no));
                    continue;
                }
            }
            chars.next();
        }
    }
    Lexer {
        toks,
        i: 0,
        file: file.to_path_buf(),
        last_line,
        nest: 0,
    }
}

/// `inf`, `nan` and the like parse as f64 but are words in DiskSim's syntax.
fn looks_numeric(w: &str) -> bool {
    w.chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))
        && w.chars().any(|c| c.is_ascii_digit())
}

impl Lexer {
    /// Opens one more level of blocks or lists, or says the file nests too deep.
    fn enter(&mut self) -> Result<(), DiskSimError> {
        self.nest += 1;
        if self.nest > MAX_NEST {
            return Err(self.err(format!(
                "blocks and lists nested more than {MAX_NEST} deep (a real model nests a few)"
            )));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.nest -= 1;
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.i).map(|t| &t.0)
    }
    fn line(&self) -> usize {
        self.toks.get(self.i).map(|t| t.1).unwrap_or(self.last_line)
    }
    fn pos(&self) -> Pos {
        Pos {
            file: self.file.clone(),
            line: self.line(),
        }
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.i).map(|t| t.0.clone());
        if t.is_some() {
            self.i += 1;
        }
        t
    }
    fn err(&self, message: impl Into<String>) -> DiskSimError {
        DiskSimError::Syntax {
            file: self.file.clone().into(),
            line: self.line(),
            message: message.into(),
        }
    }
    fn expect(&mut self, want: Tok, what: &str) -> Result<(), DiskSimError> {
        match self.peek() {
            Some(t) if *t == want => {
                self.next();
                Ok(())
            }
            Some(t) => Err(self.err(format!("expected {what}, found {}", describe(t)))),
            None => Err(self.err(format!("expected {what}, found the end of the file"))),
        }
    }
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Word(w) => format!("`{w}`"),
        Tok::Number(n) => format!("the number {}", crate::compact_value(n.to_string())),
        Tok::LBrace => "`{`".into(),
        Tok::RBrace => "`}`".into(),
        Tok::LBracket => "`[`".into(),
        Tok::RBracket => "`]`".into(),
        Tok::Comma => "`,`".into(),
        Tok::Eq => "`=`".into(),
    }
}

/// Parses a whole file, following `source` statements (resolved relative to the including
/// file). Returns the statements of this file and of every file it sources, in order.
pub fn parse_file(path: &Path) -> Result<Vec<Statement>, DiskSimError> {
    let reads = Cell::new(0);
    let mut out = Vec::new();
    parse_file_into(path, &mut out, 0, &reads)?;
    Ok(out)
}

/// Parses `text` as if it were the file at `path` (which need not exist): `source` statements
/// are resolved relative to `path` and read from disk, as [`parse_file`] would.
pub fn parse_text(text: &str, path: &Path) -> Result<Vec<Statement>, DiskSimError> {
    let reads = Cell::new(1);
    let mut out = Vec::new();
    parse_text_into(text, path, &mut out, 0, &reads)?;
    Ok(out)
}

fn read(path: &Path, from: Option<&Pos>, reads: &Cell<usize>) -> Result<String, DiskSimError> {
    reads.set(reads.get() + 1);
    if reads.get() > MAX_SOURCE_READS {
        return Err(DiskSimError::Syntax {
            file: path.to_path_buf().into(),
            line: from.map_or(1, |p| p.line),
            message: format!(
                "more than {MAX_SOURCE_READS} files read through `source` (files that source each other many times over?)"
            ),
        });
    }
    crate::read_text(path).map_err(|e| DiskSimError::Io {
        path: path.to_path_buf().into(),
        included_from: from.map(|p| p.to_string()),
        message: e.to_string(),
    })
}

fn resolve(base: &Path, name: &str) -> PathBuf {
    let p = Path::new(name);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.parent().unwrap_or(Path::new(".")).join(p)
    }
}

fn parse_file_into(
    path: &Path,
    out: &mut Vec<Statement>,
    depth: usize,
    reads: &Cell<usize>,
) -> Result<(), DiskSimError> {
    let text = read(path, None, reads)?;
    parse_text_into(&text, path, out, depth, reads)
}

fn parse_text_into(
    text: &str,
    path: &Path,
    out: &mut Vec<Statement>,
    depth: usize,
    reads: &Cell<usize>,
) -> Result<(), DiskSimError> {
    if depth > 16 {
        return Err(DiskSimError::Syntax {
            file: path.to_path_buf().into(),
            line: 1,
            message: "`source` nested more than 16 deep (a file sources itself?)".into(),
        });
    }
    let mut lx = lex(text, path);
    while let Some(tok) = lx.peek().cloned() {
        let pos = lx.pos();
        match tok {
            Tok::Word(w) if w == "source" => {
                lx.next();
                let name = match lx.next() {
                    Some(Tok::Word(n)) => n,
                    _ => return Err(lx.err("`source` must be followed by a file name")),
                };
                let file = resolve(path, &name);
                let text = read(&file, Some(&pos), reads)?;
                parse_text_into(&text, &file, out, depth + 1, reads)?;
            }
            Tok::Word(w) if w == "instantiate" => {
                lx.next();
                lx.expect(Tok::LBracket, "`[` after `instantiate`")?;
                let mut names = Vec::new();
                loop {
                    match lx.next() {
                        Some(Tok::Word(n)) => names.push(n),
                        Some(Tok::Comma) => {}
                        Some(Tok::RBracket) => break,
                        _ => {
                            return Err(lx.err("expected component names and `]` in `instantiate`"))
                        }
                    }
                }
                match lx.next() {
                    Some(Tok::Word(a)) if a == "as" => {}
                    _ => return Err(lx.err("expected `as` in `instantiate [ ... ] as NAME`")),
                }
                let kind = match lx.next() {
                    Some(Tok::Word(n)) => n,
                    _ => return Err(lx.err("expected a block name after `as`")),
                };
                out.push(Statement::Instantiate { names, kind, pos });
            }
            Tok::Word(w) if w == "topology" => {
                lx.next();
                // `topology TYPE NAME [ TYPE NAME [ ... ] ... ]`: only checked for balance; a
                // single disk behind one bus and controller is what validation needs.
                let mut depth_b = 0usize;
                let mut seen = false;
                while let Some(t) = lx.next() {
                    match t {
                        Tok::LBracket => {
                            depth_b += 1;
                            seen = true;
                        }
                        Tok::RBracket => {
                            if depth_b == 0 {
                                return Err(lx.err("unbalanced `]` in `topology`"));
                            }
                            depth_b -= 1;
                            if depth_b == 0 {
                                break;
                            }
                        }
                        Tok::Word(_) => {}
                        other => {
                            return Err(
                                lx.err(format!("unexpected {} in `topology`", describe(&other)))
                            )
                        }
                    }
                }
                if !seen || depth_b != 0 {
                    return Err(lx.err("unterminated `topology` statement (missing `]`)"));
                }
                out.push(Statement::Topology { pos });
            }
            Tok::Word(kind) => {
                lx.next();
                let name = match lx.next() {
                    Some(Tok::Word(n)) => n,
                    Some(t) => {
                        return Err(lx.err(format!(
                            "expected a block name after `{kind}`, found {}",
                            describe(&t)
                        )))
                    }
                    None => return Err(lx.err(format!("expected a block name after `{kind}`"))),
                };
                let mut b = parse_block_body(&mut lx, kind, pos, depth, reads)?;
                b.name = Some(name);
                out.push(Statement::Block(b));
            }
            other => {
                return Err(lx.err(format!(
                    "expected a block, `source`, `instantiate` or `topology`, found {}",
                    describe(&other)
                )))
            }
        }
    }
    Ok(())
}

/// Parses `{ key = value, ... }` (the opening brace not yet consumed).
fn parse_block_body(
    lx: &mut Lexer,
    kind: String,
    pos: Pos,
    depth: usize,
    reads: &Cell<usize>,
) -> Result<Block, DiskSimError> {
    lx.expect(Tok::LBrace, &format!("`{{` to open the `{kind}` block"))?;
    lx.enter()?;
    let mut params = Vec::new();
    loop {
        match lx.peek() {
            Some(Tok::RBrace) => {
                lx.next();
                break;
            }
            Some(Tok::Comma) => {
                lx.next();
                continue;
            }
            None => {
                return Err(lx.err(format!(
                    "the `{kind}` block opened at line {} is not closed (missing `}}`)",
                    pos.line
                )))
            }
            _ => {}
        }
        // Key: words and numbers up to `=`.
        let kpos = lx.pos();
        let mut key = String::new();
        loop {
            match lx.next() {
                Some(Tok::Word(w)) => {
                    if !key.is_empty() {
                        key.push(' ');
                    }
                    key.push_str(&w);
                }
                Some(Tok::Number(n)) => {
                    if !key.is_empty() {
                        key.push(' ');
                    }
                    key.push_str(&format_num(n));
                }
                Some(Tok::Eq) => break,
                Some(t) => {
                    return Err(lx.err(format!(
                        "expected `parameter name = value` in the `{kind}` block, found {}",
                        describe(&t)
                    )))
                }
                None => {
                    return Err(lx.err(format!(
                        "the `{kind}` block ends in the middle of a parameter"
                    )))
                }
            }
        }
        if key.is_empty() {
            return Err(DiskSimError::Syntax {
                file: kpos.file.into(),
                line: kpos.line,
                message: "a parameter has no name before `=`".into(),
            });
        }
        let value = parse_value(lx, depth, reads)?;
        params.push(Param {
            key,
            value,
            pos: kpos,
        });
        match lx.peek() {
            Some(Tok::Comma) | Some(Tok::RBrace) => {}
            Some(t) => {
                return Err(lx.err(format!(
                    "expected `,` or `}}` after the value of a parameter, found {}",
                    describe(t)
                )))
            }
            None => {
                return Err(lx.err(format!(
                    "the `{kind}` block opened at line {} is not closed (missing `}}`)",
                    pos.line
                )))
            }
        }
    }
    lx.leave();
    Ok(Block {
        kind,
        name: None,
        params,
        pos,
    })
}

fn format_num(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

fn parse_value(lx: &mut Lexer, depth: usize, reads: &Cell<usize>) -> Result<Value, DiskSimError> {
    let pos = lx.pos();
    match lx.next() {
        Some(Tok::Number(n)) => Ok(Value::Number(n)),
        Some(Tok::LBracket) => {
            lx.enter()?;
            let mut items = Vec::new();
            loop {
                match lx.peek() {
                    Some(Tok::RBracket) => {
                        lx.next();
                        break;
                    }
                    Some(Tok::Comma) => {
                        lx.next();
                    }
                    None => {
                        return Err(lx.err(format!(
                            "the list opened at line {} is not closed (missing `]`)",
                            pos.line
                        )))
                    }
                    _ => {
                        let ipos = lx.pos();
                        let v = parse_value(lx, depth, reads)?;
                        items.push((v, ipos));
                    }
                }
            }
            lx.leave();
            Ok(Value::List(items))
        }
        Some(Tok::Word(w)) if w == "source" => {
            let name = match lx.next() {
                Some(Tok::Word(n)) => n,
                _ => return Err(lx.err("`source` must be followed by a file name")),
            };
            let file = resolve(&lx.file, &name);
            let text = read(&file, Some(&pos), reads)?;
            let mut stmts = Vec::new();
            parse_text_into(&text, &file, &mut stmts, depth + 1, reads)?;
            let mut blocks = stmts.into_iter().filter_map(|s| match s {
                Statement::Block(b) => Some(b),
                _ => None,
            });
            match (blocks.next(), blocks.next()) {
                (Some(b), None) => Ok(Value::Block(b)),
                _ => Err(DiskSimError::Syntax {
                    file: pos.file.into(),
                    line: pos.line,
                    message: format!(
                        "`source {name}` as a value must name a file that defines exactly one block"
                    ),
                }),
            }
        }
        Some(Tok::Word(w)) => {
            if lx.peek() == Some(&Tok::LBrace) {
                Ok(Value::Block(parse_block_body(lx, w, pos, depth, reads)?))
            } else {
                Ok(Value::Word(w))
            }
        }
        Some(t) => Err(lx.err(format!("expected a value, found {}", describe(&t)))),
        None => Err(lx.err("expected a value, found the end of the file")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nested_blocks_lists_and_comments() {
        let text = "# c\nx_type NAME {\n a key (in blks) = 3, # comment\n B = w.seek,\n C = t { d = 1.5 },\n L = [ 1, 2, t { e = 0 } ],\n E = []\n}\ninstantiate [ a, b ] as NAME\n";
        let mut out = Vec::new();
        parse_text_into(text, Path::new("f.parv"), &mut out, 0, &Cell::new(0)).unwrap();
        assert_eq!(out.len(), 2);
        let Statement::Block(b) = &out[0] else {
            panic!()
        };
        assert_eq!(b.params[0].key, "a key (in blks)");
        assert_eq!(b.params[0].value, Value::Number(3.0));
        assert_eq!(b.params[1].value, Value::Word("w.seek".into()));
        assert_eq!(b.params[3].pos.line, 6);
        let Value::List(l) = &b.params[3].value else {
            panic!()
        };
        assert_eq!(l.len(), 3);
    }

    #[test]
    fn unclosed_block_names_its_line() {
        let mut out = Vec::new();
        let e = parse_text_into(
            "t N {\n a = 1,\n",
            Path::new("f"),
            &mut out,
            0,
            &Cell::new(0),
        )
        .unwrap_err();
        assert!(e.to_string().contains("not closed"), "{e}");
    }

    #[test]
    fn ten_thousand_nested_lists_are_an_error_not_a_stack_overflow() {
        let text = format!("t N {{ a = {} }}", "[".repeat(10_000));
        let e =
            parse_text_into(&text, Path::new("f"), &mut Vec::new(), 0, &Cell::new(0)).unwrap_err();
        assert!(e.to_string().contains("nested more than"), "{e}");
        let text = format!("t N {{ {} }}", "a = t { ".repeat(10_000));
        let e =
            parse_text_into(&text, Path::new("f"), &mut Vec::new(), 0, &Cell::new(0)).unwrap_err();
        assert!(e.to_string().contains("nested more than"), "{e}");
    }

    #[test]
    fn files_sourced_exponentially_often_stop_at_the_read_budget() {
        // Each level sources the next four times: 4^14 reads without the budget.
        let dir = std::env::temp_dir().join(format!("antsched-src-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for level in 0..14 {
            let next = format!("l{}.parv", level + 1);
            let body = format!("source {next}\n").repeat(4);
            std::fs::write(dir.join(format!("l{level}.parv")), body).unwrap();
        }
        std::fs::write(dir.join("l14.parv"), "t N { a = 1 }\n").unwrap();
        let e = parse_file(&dir.join("l0.parv")).unwrap_err();
        std::fs::remove_dir_all(&dir).ok();
        assert!(e.to_string().contains("files read through `source`"), "{e}");
    }
}
