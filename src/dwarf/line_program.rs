//! The rows of a line-number program, read without gimli's instruction
//! enum: on a large binary, gimli's `LineRows::next_row` was most of the
//! cost of reading a unit's line table.
//!
//! It follows gimli's `LineRows` rule for rule, so the rows are the ones
//! gimli gives: the same registers, the same tombstone handling (an address
//! set below the current one, or at -2/-1, hides rows until the sequence
//! ends), and an error wherever gimli has one (truncated operands, LEB128
//! overflow, address overflow, an unknown standard opcode the header has no
//! length for). What it does not follow (`DW_LNE_define_file`, which adds
//! to the header's file list) it reports as [`Outcome::NotHandled`], and
//! the caller reads the program with gimli instead.

use gimli::Reader;

use super::Sure;
use super::input::{Input, Malformed};

use super::Reader as R;

/// What the state machine holds when it emits a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Row {
    pub address: u64,
    pub file: u64,
    pub line: u64,
    pub column: u64,
    pub end_sequence: bool,
}

impl Row {
    /// gimli's row, as [`rows`] gives it.
    pub(crate) fn of(row: &gimli::LineRow) -> Row {
        Row {
            address: row.address(),
            file: row.file_index(),
            line: row.line().map_or(0, |l| l.get()),
            column: match row.column() {
                gimli::ColumnType::LeftEdge => 0,
                gimli::ColumnType::Column(c) => c.get(),
            },
            end_sequence: row.end_sequence(),
        }
    }
}

/// The header fields the program's opcodes depend on.
struct Encoding<'h> {
    address_size: u8,
    minimum_instruction_length: u8,
    maximum_operations_per_instruction: u8,
    line_base: i8,
    line_range: u8,
    opcode_base: u8,
    /// Operand counts of the standard opcodes, from 1.
    standard_opcode_lengths: &'h [u8],
    version: u16,
    big_endian: bool,
}

impl<'h> Encoding<'h> {
    fn of<E: gimli::Endianity>(header: &gimli::LineProgramHeader<EndianSlice<'h, E>>) -> Self {
        Encoding {
            address_size: header.address_size(),
            minimum_instruction_length: header.minimum_instruction_length(),
            maximum_operations_per_instruction: header.maximum_operations_per_instruction(),
            line_base: header.line_base(),
            line_range: header.line_range(),
            opcode_base: header.opcode_base(),
            standard_opcode_lengths: header.standard_opcode_lengths().slice(),
            version: header.version(),
            big_endian: header.raw_program_buf().endian().is_big_endian(),
        }
    }
}

type EndianSlice<'h, E> = gimli::EndianSlice<'h, E>;

pub(crate) enum Outcome {
    Done,
    /// The program defines a file: read it with gimli.
    NotHandled,
}

/// Where a program's rows go, for [`read_all`].
pub(crate) trait RowSink {
    fn take(&mut self, row: Row);
    /// Forget the rows taken so far (gimli reads the program again).
    fn restart(&mut self);
}

/// Every row of `program` into `sink`: with [`rows`], or with gimli's
/// `LineRows` from the start where the program defines files; then
/// `files` with the header that names the rows' files (gimli's, holding
/// the defined files, in that case). Our reader's failure is
/// `Malformed("line program")`, gimli's is its own error.
pub(crate) fn read_all<'a, T>(
    program: &gimli::IncompleteLineProgram<R<'a>>,
    sink: &mut impl RowSink,
    files: impl FnOnce(&gimli::LineProgramHeader<R<'a>>) -> Sure<T>,
) -> Sure<T> {
    match rows(program.header(), |row| sink.take(row)) {
        Err(Malformed) => Err(super::Error::Malformed("line program")),
        Ok(Outcome::Done) => files(program.header()),
        Ok(Outcome::NotHandled) => {
            sink.restart();
            let mut gimli_rows = program.clone().rows();
            while let Some((_, row)) = gimli_rows.next_row()? {
                sink.take(Row::of(row));
            }
            files(gimli_rows.header())
        }
    }
}

type Result<T> = std::result::Result<T, Malformed>;

/// The registers gimli keeps that reach the rows we keep (`is_stmt` and
/// the other flags do not).
struct Registers {
    tombstone: bool,
    address: u64,
    op_index: u64,
    file: u64,
    line: u64,
    column: u64,
    end_sequence: bool,
}

impl Registers {
    fn new() -> Registers {
        Registers {
            tombstone: false,
            address: 0,
            op_index: 0,
            file: 1,
            line: 1,
            column: 0,
            end_sequence: false,
        }
    }

    fn advance_line(&mut self, increment: i64) {
        if increment < 0 {
            let decrement = increment.unsigned_abs();
            self.line = self.line.saturating_sub(decrement);
        } else {
            self.line = self.line.wrapping_add(increment as u64);
        }
    }

    fn advance_operation(&mut self, advance: u64, enc: &Encoding<'_>) -> Result<()> {
        if self.tombstone {
            return Ok(());
        }
        let min_length = u64::from(enc.minimum_instruction_length);
        let max_ops = u64::from(enc.maximum_operations_per_instruction);
        let address_advance = if max_ops == 1 {
            self.op_index = 0;
            min_length.wrapping_mul(advance)
        } else {
            let with_advance = self.op_index.wrapping_add(advance);
            self.op_index = with_advance % max_ops;
            min_length.wrapping_mul(with_advance / max_ops)
        };
        self.address = add_sized(self.address, address_advance, enc.address_size)?;
        Ok(())
    }
}

/// gimli's `ReaderAddress::add_sized`.
fn add_sized(address: u64, length: u64, size: u8) -> Result<u64> {
    let sum = address.checked_add(length).ok_or(Malformed)?;
    if sum & !ones(size) != 0 {
        return Err(Malformed);
    }
    Ok(sum)
}

fn ones(size: u8) -> u64 {
    !0 >> (64 - u32::from(size) * 8)
}

/// Call `row` with each row of the program after `header` that gimli's
/// `LineRows` yields.
pub(crate) fn rows<E: gimli::Endianity>(
    header: &gimli::LineProgramHeader<EndianSlice<'_, E>>,
    row: impl FnMut(Row),
) -> Result<Outcome> {
    run(header.raw_program_buf().slice(), &Encoding::of(header), row)
}

fn run(program: &[u8], enc: &Encoding<'_>, mut row: impl FnMut(Row)) -> Result<Outcome> {
    if !matches!(enc.address_size, 1 | 2 | 4 | 8)
        || enc.line_range == 0
        || enc.maximum_operations_per_instruction == 0
    {
        return Err(Malformed);
    }
    let mut input = Input {
        bytes: program,
        pos: 0,
    };
    let mut r = Registers::new();
    while input.pos < input.bytes.len() {
        let opcode = input.u8()?;
        // Extended first: with an opcode base of 0 gimli still reads 0 so.
        let emit = if opcode == 0 {
            let length = usize::try_from(input.uleb()?).map_err(|_| Malformed)?;
            let start = input.pos;
            let end = start.checked_add(length).ok_or(Malformed)?;
            if end > input.bytes.len() {
                return Err(Malformed);
            }
            let mut rest = Input {
                bytes: &input.bytes[..end],
                pos: start,
            };
            input.pos = end;
            match rest.u8()? {
                // DW_LNE_end_sequence
                1 => {
                    r.end_sequence = true;
                    true
                }
                // DW_LNE_set_address
                2 => {
                    let address = rest.fixed(usize::from(enc.address_size), enc.big_endian)?;
                    let min_tombstone = 0u64.wrapping_sub(2) & ones(enc.address_size);
                    r.tombstone = address < r.address || address >= min_tombstone;
                    if !r.tombstone {
                        r.address = address;
                        r.op_index = 0;
                    }
                    false
                }
                // DW_LNE_define_file
                3 if enc.version <= 4 => return Ok(Outcome::NotHandled),
                // DW_LNE_set_discriminator
                4 => {
                    rest.uleb()?;
                    false
                }
                _ => false,
            }
        } else if opcode >= enc.opcode_base {
            let adjusted = opcode - enc.opcode_base;
            r.advance_line(i64::from(enc.line_base) + i64::from(adjusted % enc.line_range));
            r.advance_operation(u64::from(adjusted / enc.line_range), enc)?;
            true
        } else {
            match opcode {
                // DW_LNS_copy
                1 => true,
                // DW_LNS_advance_pc
                2 => {
                    let advance = input.uleb()?;
                    r.advance_operation(advance, enc)?;
                    false
                }
                // DW_LNS_advance_line
                3 => {
                    let increment = input.sleb()?;
                    r.advance_line(increment);
                    false
                }
                // DW_LNS_set_file
                4 => {
                    r.file = input.uleb()?;
                    false
                }
                // DW_LNS_set_column
                5 => {
                    r.column = input.uleb()?;
                    false
                }
                // DW_LNS_negate_stmt, set_basic_block, set_prologue_end,
                // set_epilogue_begin: flags no row of ours keeps.
                6 | 7 | 10 | 11 => false,
                // DW_LNS_const_add_pc
                8 => {
                    let adjusted = 255 - enc.opcode_base;
                    r.advance_operation(u64::from(adjusted / enc.line_range), enc)?;
                    false
                }
                // DW_LNS_fixed_advance_pc
                9 => {
                    let advance = input.fixed(2, enc.big_endian)?;
                    if !r.tombstone {
                        r.address = add_sized(r.address, advance, enc.address_size)?;
                        r.op_index = 0;
                    }
                    false
                }
                // DW_LNS_set_isa
                12 => {
                    input.uleb()?;
                    false
                }
                _ => {
                    let args = *enc
                        .standard_opcode_lengths
                        .get(usize::from(opcode - 1))
                        .ok_or(Malformed)?;
                    for _ in 0..args {
                        input.uleb()?;
                    }
                    false
                }
            }
        };
        if emit {
            if !r.tombstone {
                row(Row {
                    address: r.address,
                    file: r.file,
                    line: r.line,
                    column: r.column,
                    end_sequence: r.end_sequence,
                });
            }
            if r.end_sequence {
                r = Registers::new();
            }
        }
    }
    Ok(Outcome::Done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A DWARF 4 `.debug_line` unit: header with one file, then `program`.
    fn section(address_size: u8, params: &[u8; 5], lengths: &[u8], program: &[u8]) -> Vec<u8> {
        let [min_length, max_ops, line_base, line_range, opcode_base] = *params;
        let mut after_length = vec![4, 0]; // version
        let mut header = vec![min_length, max_ops, 1, line_base, line_range, opcode_base];
        header.extend_from_slice(lengths);
        header.push(0); // no include directories
        header.extend_from_slice(b"a.c\0\0\0\0");
        header.push(0); // end of files
        after_length.extend_from_slice(&(header.len() as u32).to_le_bytes());
        after_length.extend_from_slice(&header);
        after_length.extend_from_slice(program);
        let _ = address_size;
        let mut unit = (after_length.len() as u32).to_le_bytes().to_vec();
        unit.extend_from_slice(&after_length);
        unit
    }

    /// gimli's rows (until its first error), and whether it failed.
    fn gimli_rows(section: &[u8], address_size: u8) -> Option<(Vec<Row>, bool)> {
        let debug_line = gimli::DebugLine::new(section, gimli::LittleEndian);
        let program = debug_line
            .program(gimli::DebugLineOffset(0), address_size, None, None)
            .ok()?;
        let mut rows = program.rows();
        let mut out = Vec::new();
        loop {
            match rows.next_row() {
                Ok(Some((_, row))) => out.push(Row::of(row)),
                Ok(None) => return Some((out, false)),
                Err(_) => return Some((out, true)),
            }
        }
    }

    fn ours(section: &[u8], address_size: u8, program: &[u8]) -> Option<(Vec<Row>, bool)> {
        let debug_line = gimli::DebugLine::new(section, gimli::LittleEndian);
        let parsed = debug_line
            .program(gimli::DebugLineOffset(0), address_size, None, None)
            .ok()?;
        let header = parsed.header();
        assert_eq!(header.raw_program_buf().slice(), program);
        let mut out = Vec::new();
        match rows(header, |r| out.push(r)) {
            Ok(Outcome::Done) => Some((out, false)),
            Ok(Outcome::NotHandled) => None,
            Err(Malformed) => Some((out, true)),
        }
    }

    /// Instructions as bytes: special and standard opcodes with operands,
    /// extended ones (addresses near the tombstones, end of sequence,
    /// unknown), and raw bytes.
    fn instruction() -> impl Strategy<Value = Vec<u8>> {
        fn uleb(mut v: u64) -> Vec<u8> {
            let mut out = Vec::new();
            loop {
                let byte = (v & 0x7f) as u8;
                v >>= 7;
                if v == 0 {
                    out.push(byte);
                    return out;
                }
                out.push(byte | 0x80);
            }
        }
        let address = prop_oneof![
            0u64..0x2000,
            Just(u64::MAX),
            Just(u64::MAX - 1),
            Just(u64::MAX - 2),
            Just(0xffff_fffe),
            any::<u64>(),
        ];
        prop_oneof![
            4 => (1u8..=255).prop_map(|op| vec![op]),
            2 => (1u8..=12, prop_oneof![0u64..300, any::<u64>()]).prop_map(|(op, v)| {
                let mut b = vec![op];
                b.extend(uleb(v));
                b
            }),
            1 => (any::<u16>()).prop_map(|v| {
                let mut b = vec![9];
                b.extend_from_slice(&v.to_le_bytes());
                b
            }),
            2 => address.prop_map(|a| {
                let mut b = vec![0, 9, 2];
                b.extend_from_slice(&a.to_le_bytes());
                b
            }),
            2 => Just(vec![0, 1, 1]),
            1 => (any::<u8>(), prop::collection::vec(any::<u8>(), 0..4)).prop_map(|(op, rest)| {
                let mut b = vec![0, rest.len() as u8 + 1, op];
                b.extend(rest);
                b
            }),
            1 => prop::collection::vec(any::<u8>(), 1..6),
        ]
    }

    /// A program that defines a file is left to gimli (the file joins the
    /// header's list, which the caller reads after the rows).
    #[test]
    fn a_defined_file_is_left_to_gimli() {
        // set_address 0x1000, copy, define_file "b.c" (dir 0, mtime 0, size 0), copy.
        let mut program = vec![0, 9, 2];
        program.extend_from_slice(&0x1000u64.to_le_bytes());
        program.push(1);
        program.extend_from_slice(&[0, 8, 3, b'b', b'.', b'c', 0, 0, 0, 0]);
        program.push(1);
        let params = [1, 1, 0xfb, 14, 13];
        let lengths = [0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1];
        let section = section(8, &params, &lengths, &program);
        assert!(ours(&section, 8, &program).is_none());
        let (rows, failed) = gimli_rows(&section, 8).unwrap();
        assert!(!failed);
        assert_eq!(rows.len(), 2);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        #[test]
        fn rows_are_gimlis_rows(
            wide in any::<bool>(),
            min_length in 0u8..5,
            max_ops in 0u8..4,
            line_base in -6i8..2,
            line_range in 0u8..16,
            opcode_base in 0u8..16,
            lengths in prop::collection::vec(0u8..3, 15),
            program in prop::collection::vec(instruction(), 0..40),
        ) {
            let address_size = if wide { 8 } else { 4 };
            let lengths = &lengths[..usize::from(opcode_base.saturating_sub(1))];
            let program: Vec<u8> = program.concat();
            let params = [min_length, max_ops, line_base as u8, line_range, opcode_base];
            let section = section(address_size, &params, lengths, &program);
            let Some((theirs, their_error)) = gimli_rows(&section, address_size) else {
                // gimli refuses the header: so does the engine (it asks gimli first).
                return Ok(());
            };
            if let Some((rows, error)) = ours(&section, address_size, &program) {
                prop_assert_eq!(&rows, &theirs);
                prop_assert_eq!(error, their_error);
            }
        }
    }
}
