//! The column of line-table rows with line 0.
//!
//! LLVM takes the innermost frame's location from the line-table row that
//! covers the address (`DWARFDebugLine::LineTable::lookupAddress`, then
//! `getFileLineInfoForAddress`), and prints that row's line and column as they
//! are, so a row with line 0 and column 21 gives `file:0:21`. The addr2line
//! crate reports no column when the line is 0. For those frames only, this
//! module finds the row again and returns its column.
//!
//! Outer (inlined-at) frames need nothing: LLVM prints `DW_AT_call_line` and
//! `DW_AT_call_column` as they are, and addr2line keeps the call column even
//! when the call line is 0.
//!
//! Per unit, on the first line-0 frame in it, the line program is run once and
//! only its line-0 rows with a column are kept, as address ranges, grouped by
//! sequence exactly as addr2line groups them (same sequence filter, same row
//! merging, same sort), so the row found is the row addr2line found.

use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::sync::Arc;

use addr2line::{Context, LookupContinuation, LookupResult, SplitDwarfLoad};
use gimli::{Dwarf, IncompleteLineProgram, Reader};

/// A line-0 row with a column: `[start, end)` and the column.
#[derive(Debug, Clone, Copy)]
struct Row0 {
    start: u64,
    end: u64,
    column: u32,
}

/// One sequence: its address range and its line-0 rows (`rows[first..last]`).
#[derive(Debug)]
struct Seq {
    start: u64,
    end: u64,
    first: usize,
    last: usize,
}

/// The line-0 rows of one unit's line program.
#[derive(Debug, Default)]
struct UnitRows {
    seqs: Box<[Seq]>,
    rows: Box<[Row0]>,
}

impl UnitRows {
    /// Runs the line program. A program that cannot be read to its end keeps
    /// the sequences read so far (addr2line would have failed the lookup then,
    /// and never asks).
    fn build<R: Reader>(program: IncompleteLineProgram<R>) -> UnitRows {
        // Each sequence's rows, merged like addr2line's: a row at the same
        // address as the previous one replaces it.
        let mut seqs: Vec<(u64, u64, Vec<Row0>)> = Vec::new();
        let mut current: Vec<(u64, u64, u32)> = Vec::new(); // (address, line, column)
        let mut rows = program.rows();
        while let Ok(Some((_, row))) = rows.next_row() {
            if row.end_sequence() {
                let end = row.address();
                if let Some(&(start, _, _)) = current.first()
                    && start < end
                {
                    let mut zero = Vec::new();
                    for (i, &(address, line, column)) in current.iter().enumerate() {
                        if line == 0 && column != 0 {
                            let next = current.get(i + 1).map_or(end, |r| r.0);
                            zero.push(Row0 {
                                start: address,
                                end: next,
                                column,
                            });
                        }
                    }
                    seqs.push((start, end, zero));
                }
                current.clear();
                continue;
            }
            let line = row.line().map_or(0, |l| l.get());
            let column = match row.column() {
                gimli::ColumnType::LeftEdge => 0,
                // addr2line keeps columns as u32; so does LLVM's row.
                gimli::ColumnType::Column(c) => c.get() as u32,
            };
            match current.last_mut() {
                Some(last) if last.0 == row.address() => *last = (row.address(), line, column),
                _ => current.push((row.address(), line, column)),
            }
        }
        // The same keys sorted by the same algorithm: the same order as
        // addr2line's, also for sequences that start at the same address.
        seqs.sort_unstable_by_key(|s| s.0);
        let mut out = UnitRows::default();
        let mut all = Vec::new();
        let mut bounds = Vec::with_capacity(seqs.len());
        for (start, end, zero) in seqs {
            let first = all.len();
            all.extend(zero);
            bounds.push(Seq {
                start,
                end,
                first,
                last: all.len(),
            });
        }
        out.seqs = bounds.into_boxed_slice();
        out.rows = all.into_boxed_slice();
        out
    }

    /// The column of the line-0 row covering `probe`, found as addr2line
    /// finds rows (binary search of the sequences, then of the rows).
    fn column(&self, probe: u64) -> Option<u32> {
        let seq = self
            .seqs
            .binary_search_by(|s| {
                if probe < s.start {
                    std::cmp::Ordering::Greater
                } else if probe >= s.end {
                    std::cmp::Ordering::Less
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .ok()?;
        let seq = self.seqs.get(seq)?;
        let rows = self.rows.get(seq.first..seq.last)?;
        let i = rows.partition_point(|r| r.start <= probe).checked_sub(1)?;
        let row = rows.get(i)?;
        (probe < row.end).then_some(row.column)
    }
}

/// Which line program a unit uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    /// A unit of the main file, by its section offset.
    Main(usize),
    /// A split unit, by its DWO ID: its line table is its skeleton's.
    Dwo(u64),
}

/// Per-module cache of line-0 columns, filled one unit at a time.
pub(crate) struct Line0Columns<R: Reader> {
    units: RefCell<HashMap<Key, Arc<UnitRows>>>,
    /// Skeleton units' line programs by DWO ID (built on the first split unit).
    skeletons: OnceCell<HashMap<u64, IncompleteLineProgram<R>>>,
}

impl<R: Reader> Default for Line0Columns<R> {
    fn default() -> Self {
        Line0Columns {
            units: RefCell::new(HashMap::new()),
            skeletons: OnceCell::new(),
        }
    }
}

impl<R: Reader<Offset = usize>> Line0Columns<R> {
    /// The column LLVM prints for the innermost frame at `probe`, which
    /// addr2line reported with a location but no line (a line-0 row). `None`
    /// when no line-0 row with a column covers `probe`. `load` loads split
    /// DWARF, should addr2line ask for it again (it has already loaded it for
    /// the frame lookup, so it does not).
    pub(crate) fn column(
        &self,
        ctx: &Context<R>,
        main: &Dwarf<R>,
        probe: u64,
        mut load: impl FnMut(&SplitDwarfLoad<R>) -> Option<Arc<Dwarf<R>>>,
    ) -> Option<u32> {
        let mut lookup = ctx.find_dwarf_and_unit(probe);
        let unit = loop {
            match lookup {
                LookupResult::Output(u) => break u?,
                LookupResult::Load {
                    load: l,
                    continuation,
                } => {
                    lookup = continuation.resume(load(&l));
                }
            }
        };
        let key = if std::ptr::eq(unit.dwarf, main) {
            Key::Main(unit.unit.header.offset().0)
        } else {
            Key::Dwo(unit.unit.dwo_id?.0)
        };
        let cached = self.units.borrow().get(&key).cloned();
        let rows = match cached {
            Some(rows) => rows,
            None => {
                let program = match key {
                    Key::Main(_) => unit.unit.line_program.clone(),
                    Key::Dwo(id) => self.skeletons(main).get(&id).cloned(),
                };
                let rows = Arc::new(program.map(UnitRows::build).unwrap_or_default());
                self.units.borrow_mut().insert(key, rows.clone());
                rows
            }
        };
        rows.column(probe)
    }

    fn skeletons(&self, main: &Dwarf<R>) -> &HashMap<u64, IncompleteLineProgram<R>> {
        self.skeletons.get_or_init(|| {
            let mut map = HashMap::new();
            let mut headers = main.units();
            while let Ok(Some(header)) = headers.next() {
                let Ok(unit) = main.unit(header) else {
                    continue;
                };
                if let (Some(id), Some(program)) = (unit.dwo_id, unit.line_program) {
                    map.entry(id.0).or_insert(program);
                }
            }
            map
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::{CodeWant, SymbolSource};

    /// A sequence's start and end and its line-0 rows (start, end, column).
    type SeqSpec<'a> = (u64, u64, &'a [(u64, u64, u32)]);

    fn rows(seqs: &[SeqSpec<'_>]) -> UnitRows {
        let mut all = Vec::new();
        let mut bounds = Vec::new();
        for &(start, end, zero) in seqs {
            let first = all.len();
            all.extend(
                zero.iter()
                    .map(|&(start, end, column)| Row0 { start, end, column }),
            );
            bounds.push(Seq {
                start,
                end,
                first,
                last: all.len(),
            });
        }
        UnitRows {
            seqs: bounds.into_boxed_slice(),
            rows: all.into_boxed_slice(),
        }
    }

    #[test]
    fn finds_the_covering_row_only() {
        let u = rows(&[
            (0x100, 0x140, &[(0x110, 0x118, 21), (0x130, 0x140, 3)]),
            (0x200, 0x210, &[]),
        ]);
        assert_eq!(u.column(0x10f), None);
        assert_eq!(u.column(0x110), Some(21));
        assert_eq!(u.column(0x117), Some(21));
        assert_eq!(u.column(0x118), None);
        assert_eq!(u.column(0x13f), Some(3));
        assert_eq!(u.column(0x140), None);
        assert_eq!(u.column(0x205), None);
        assert_eq!(u.column(u64::MAX), None);
        assert_eq!(UnitRows::default().column(0), None);
    }

    /// Every byte of .text against llvm-symbolizer 22 (testdata/line0/build.sh).
    fn check_against_llvm(obj: &str, expected: &str) {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
        let src = crate::elf::open_file(&root.join(obj), &[]).expect("open the fixture");
        let want = std::fs::read_to_string(root.join("line0").join(expected)).expect("expected");
        let mut got = String::new();
        let mut last = None;
        for line in want.lines() {
            let addr = line.split(' ').next().unwrap_or("");
            if last == Some(addr) {
                continue; // further frames of the same address
            }
            last = Some(addr);
            let a = u64::from_str_radix(addr.trim_start_matches("0x"), 16).expect("address");
            let info = src.lookup_code(a, CodeWant::default()).expect("code info");
            for f in &info.frames {
                got.push_str(&format!(
                    "{addr} {} {}:{}:{}\n",
                    f.function.as_deref().unwrap_or(""),
                    f.file.as_deref().unwrap_or(""),
                    f.line,
                    f.column
                ));
            }
        }
        assert!(
            want.contains(":0:21"),
            "{expected}: no line-0 row with a column"
        );
        for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
            assert_eq!(g, w, "{expected}: line {}", i + 1);
        }
        assert_eq!(got.lines().count(), want.lines().count(), "{expected}");
    }

    #[test]
    fn line0_columns_match_llvm() {
        check_against_llvm("bin/libfixture.so", "libfixture.so.expected");
    }

    #[test]
    fn line0_columns_of_split_units_come_from_the_skeleton() {
        check_against_llvm("line0/lib_split.so", "lib_split.so.expected");
    }
}
