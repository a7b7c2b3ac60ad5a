//! A unit's line table: its sequences of rows and its file names, read
//! once per unit on the first lookup that lands in it.
//!
//! Rows are grouped and searched as addr2line does (the same sequence
//! filter, the same merging of rows at one address, the same sort), and
//! each row keeps its column even on line 0, which LLVM prints.
//! Following addr2line's design (Apache-2.0 OR MIT); no code is copied.

use std::sync::Mutex;

use gimli::UnitRef;
use rustc_hash::FxHashSet;

use super::Sure;
use super::line_program::{self, Row, RowSink};
use super::ranges::{all_narrow, place};
use crate::base::{lock, search};
use crate::symbols::Text;

use super::Reader as R;

/// A line-table row; addr2line's `LineRow`.
#[derive(Clone, Copy)]
pub(crate) struct LineRow {
    address: u64,
    pub file_index: u64,
    pub line: u32,
    pub column: u32,
}

/// A row of a sequence that spans less than 4 GiB, as it is kept: its
/// address as an offset from the sequence's start, its file index
/// saturated (no unit has 2^32 files, so the index names none either way).
/// Two thirds of the room of a [`LineRow`], for every row of every unit a
/// lookup has read.
#[derive(Clone, Copy)]
struct NearRow {
    offset: u32,
    file_index: u32,
    line: u32,
    column: u32,
}

/// A sequence's rows, in the program's order.
enum Rows {
    /// All within 4 GiB above the first (any real program's).
    Near(Box<[NearRow]>),
    Far(Box<[LineRow]>),
}

/// addr2line's `LineSequence`.
struct LineSequence {
    start: u64,
    end: u64,
    rows: Rows,
}

/// Sequences as the rows of a line program make them (addr2line's way).
#[derive(Default)]
struct Table {
    sequences: Vec<LineSequence>,
    /// Rows of the sequence being read.
    current: Vec<LineRow>,
}

impl RowSink for Table {
    fn restart(&mut self) {
        *self = Table::default();
    }

    fn take(&mut self, row: Row) {
        if row.end_sequence {
            if let Some(start) = self.current.first().map(|r| r.address) {
                let end = row.address;
                // One allocation of the right size; `current` keeps its room.
                let near = |r: &LineRow| {
                    Some(NearRow {
                        offset: u32::try_from(r.address.checked_sub(start)?).ok()?,
                        file_index: u32::try_from(r.file_index).unwrap_or(u32::MAX),
                        line: r.line,
                        column: r.column,
                    })
                };
                let rows = match all_narrow(&self.current, near) {
                    Some(rows) => Rows::Near(rows),
                    None => Rows::Far(self.current.as_slice().into()),
                };
                self.current.clear();
                if start < end {
                    self.sequences.push(LineSequence { start, end, rows });
                }
            }
            return;
        }
        let next = LineRow {
            address: row.address,
            file_index: row.file,
            line: row.line as u32,
            column: row.column as u32,
        };
        // A row at the same address replaces the one before.
        match self.current.last_mut() {
            Some(last) if last.address == next.address => *last = next,
            _ => self.current.push(next),
        }
    }
}

/// File names made for units' line tables, each once per file (see
/// [`Lines::parse`]).
#[derive(Default)]
pub(crate) struct Paths(Mutex<FxHashSet<Text>>);

/// Distinct file names kept in [`Paths`], at most: beyond, a name is made
/// for each unit naming it (as many as the line tables hold, no more).
const MAX_PATHS: usize = 1 << 16;

/// The unit's line table and file names, as addr2line keeps them.
pub(crate) struct Lines {
    files: Vec<Text>,
    sequences: Vec<LineSequence>,
}

impl Lines {
    /// The line table of `unit` from `program`, its file names taken from
    /// `paths` where another unit named the same file (a program's units
    /// mostly name the same headers and library sources).
    pub(crate) fn parse<'a>(
        unit: UnitRef<'_, R<'a>>,
        program: gimli::IncompleteLineProgram<R<'a>>,
        paths: &Paths,
    ) -> Sure<Lines> {
        let mut table = Table::default();
        let mut files = line_program::read_all(&program, &mut table, |header| {
            let mut files = Vec::with_capacity(header.file_names().len() + 1);
            let mut path = String::new();
            let mut paths = lock(&paths.0);
            let mut shared = |path: &str| match paths.get(path) {
                Some(text) => Text::clone(text),
                None => {
                    let text = Text::from(path);
                    if paths.len() < MAX_PATHS {
                        paths.insert(Text::clone(&text));
                    }
                    text
                }
            };
            match header.file(0) {
                Some(file) => {
                    file_path(unit, file, header, &mut path)?;
                    files.push(shared(&path));
                }
                // DWARF 4 and older number files from 1.
                None => files.push(shared("")),
            }
            let mut index = 1;
            while let Some(file) = header.file(index) {
                file_path(unit, file, header, &mut path)?;
                files.push(shared(&path));
                index += 1;
            }
            Ok(files)
        })?;
        let mut sequences = table.sequences;
        sequences.sort_unstable_by_key(|s| s.start);
        files.shrink_to_fit();
        sequences.shrink_to_fit();
        Ok(Lines { files, sequences })
    }

    pub(crate) fn file(&self, index: u64) -> Option<Text> {
        self.files.get(usize::try_from(index).ok()?).cloned()
    }

    /// The row covering `probe`.
    pub(crate) fn find(&self, probe: u64) -> Option<LineRow> {
        let s = search::binary_search_by(&self.sequences, |s| place(s.start, s.end, probe)).ok()?;
        let sequence = &self.sequences[s];
        // The row at `probe`, else the one before it.
        let at = |found: Result<usize, usize>| match found {
            Ok(i) => Some(i),
            Err(0) => None,
            Err(i) => Some(i - 1),
        };
        match &sequence.rows {
            Rows::Near(rows) => {
                // The sequence holds `probe`: it is at or above the start.
                let offset = probe - sequence.start;
                let r = rows[at(search::binary_search_by(rows, |r| {
                    u64::from(r.offset).cmp(&offset)
                }))?];
                Some(LineRow {
                    address: sequence.start + u64::from(r.offset),
                    file_index: u64::from(r.file_index),
                    line: r.line,
                    column: r.column,
                })
            }
            Rows::Far(rows) => {
                Some(rows[at(search::binary_search_by(rows, |r| r.address.cmp(&probe)))?])
            }
        }
    }
}

/// A file entry's path: the unit's directory, the entry's directory (index
/// 0 is the unit's own) and its name, each absolute part replacing what
/// came before (addr2line's rendering, for the same strings), written in
/// `path`.
pub(crate) fn file_path<'a>(
    unit: UnitRef<'_, R<'a>>,
    file: &gimli::FileEntry<R<'a>>,
    header: &gimli::LineProgramHeader<R<'a>>,
    path: &mut String,
) -> Sure<()> {
    let (dir, name) = file_parts(unit, file, header)?;
    path.clear();
    if let Some(dir) = &unit.comp_dir {
        path.push_str(&dir.to_string_lossy());
    }
    if let Some(dir) = dir {
        push_path(path, &dir.to_string_lossy());
    }
    push_path(path, &name.to_string_lossy());
    Ok(())
}

/// The strings a file entry's path is made of, read as addr2line reads
/// them: the entry's directory (none for index 0, the unit's own) and its
/// name.
pub(crate) fn file_parts<'a>(
    unit: UnitRef<'_, R<'a>>,
    file: &gimli::FileEntry<R<'a>>,
    header: &gimli::LineProgramHeader<R<'a>>,
) -> Sure<(Option<R<'a>>, R<'a>)> {
    let dir = match file.directory(header) {
        Some(dir) if file.directory_index() != 0 => Some(unit.attr_string(dir)?),
        _ => None,
    };
    Ok((dir, unit.attr_string(file.path_name())?))
}

fn push_path(path: &mut String, part: &str) {
    let unix_root = |p: &str| p.starts_with('/') || p.get(1..3) == Some(":/");
    let windows_root = |p: &str| p.starts_with('\\') || p.get(1..3) == Some(":\\");
    if unix_root(part) || windows_root(part) {
        path.clear();
        path.push_str(part);
        return;
    }
    let separator = if windows_root(path) { '\\' } else { '/' };
    if !path.is_empty() && !path.ends_with(separator) {
        path.push(separator);
    }
    path.push_str(part);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(address: u64, file: u64, line: u64, end_sequence: bool) -> Row {
        Row {
            address,
            file,
            line,
            column: line + 1,
            end_sequence,
        }
    }

    /// Rows kept near (offsets) and far (a sequence spanning more than
    /// 4 GiB, a row below its first, a file index past 32 bits) are found
    /// alike.
    #[test]
    fn near_and_far_rows_are_found_alike() {
        let mut table = Table::default();
        let far = 0x1_0000_0000 + 0x50;
        for r in [
            row(0x10, 1, 10, false),
            row(0x20, 1, 20, false),
            row(0x30, 0, 0, true),
            row(0x40, 2, 40, false),
            row(far, u64::MAX, 50, false),
            row(far + 0x10, 0, 0, true),
            row(far + 0x9000, 3, 60, false),
            row(far + 0x8000, 3, 70, false),
            row(far + 0x9100, 0, 0, true),
        ] {
            table.take(r);
        }
        assert!(matches!(table.sequences[0].rows, Rows::Near(_)));
        assert!(matches!(table.sequences[1].rows, Rows::Far(_)));
        assert!(matches!(table.sequences[2].rows, Rows::Far(_)));
        let mut sequences = table.sequences;
        sequences.sort_unstable_by_key(|s| s.start);
        let lines = Lines {
            files: Vec::new(),
            sequences,
        };
        let found = |probe| lines.find(probe).map(|r| (r.address, r.file_index, r.line));
        assert_eq!(found(0x0f), None);
        assert_eq!(found(0x10), Some((0x10, 1, 10)));
        assert_eq!(found(0x2f), Some((0x20, 1, 20)));
        assert_eq!(found(0x30), None);
        assert_eq!(found(0x41), Some((0x40, 2, 40)));
        assert_eq!(found(far + 1), Some((far, u64::MAX, 50)));
        assert_eq!(found(far + 0x20), None);
        // Rows out of order are searched as addr2line searches them.
        assert_eq!(found(far + 0x9050), Some((far + 0x8000, 3, 70)));
    }

    /// addr2line's joining rule: an absolute part (either style) replaces
    /// the path; otherwise the path's own style's separator joins them.
    #[test]
    fn paths_join_in_the_style_of_the_directory() {
        let join = |dir: &str, part: &str| {
            let mut path = dir.to_owned();
            push_path(&mut path, part);
            path
        };
        assert_eq!(join("/src", "a.c"), "/src/a.c");
        assert_eq!(join("/src/", "a.c"), "/src/a.c");
        assert_eq!(join("", "a.c"), "a.c");
        assert_eq!(join("/src", "/abs/a.c"), "/abs/a.c");
        assert_eq!(join("C:\\src", "a.c"), "C:\\src\\a.c");
        assert_eq!(join("C:\\src\\", "a.c"), "C:\\src\\a.c");
        assert_eq!(join("\\\\server\\share", "a.c"), "\\\\server\\share\\a.c");
        assert_eq!(join("C:/src", "a.c"), "C:/src/a.c");
        assert_eq!(join("/src", "D:\\x\\a.c"), "D:\\x\\a.c");
        assert_eq!(join("C:\\src", "E:/y/a.c"), "E:/y/a.c");
    }
}
