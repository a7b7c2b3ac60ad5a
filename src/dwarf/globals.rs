//! Declaration file and line of global variables, for data lookups.
//!
//! Like LLVM's `DWARFUnit::getVariableForAddress`: every `DW_TAG_variable`
//! whose location is a single `DW_OP_addr`/`DW_OP_addrx` expression covers
//! `[addr, addr + size of its type)` (1 byte when the size is unknown); a
//! later variable at the same address replaces an earlier one. Built on the
//! first data lookup of a module (a walk over every DIE), then binary-searched.

use gimli::AttributeValue;

use super::die_walk::DieWalk;
use super::units::AbbreviationSets;
use crate::symbols::Text;

use super::Reader as R;

#[derive(Clone, Debug, PartialEq)]
pub struct Global {
    pub start: u64,
    pub end: u64,
    pub file: Option<Text>,
    pub line: u32,
}

#[derive(Default)]
pub(crate) struct Globals {
    vars: Vec<Global>,
}

/// Types nested deeper than this are treated as of unknown size.
const MAX_TYPE_DEPTH: usize = 16;

impl Globals {
    pub(crate) fn build(dwarf: &gimli::Dwarf<R<'_>>) -> Globals {
        let mut headers = Vec::new();
        let mut units = dwarf.units();
        while let Ok(Some(header)) = units.next() {
            headers.push(header);
        }
        let mut vars = in_parallel(dwarf, &headers, PARALLEL_MIN);
        // Stable sort, then keep the last variable of each address.
        vars.sort_by_key(|g: &Global| g.start);
        let mut out: Vec<Global> = Vec::with_capacity(vars.len());
        for g in vars {
            match out.last_mut() {
                Some(last) if last.start == g.start => *last = g,
                _ => out.push(g),
            }
        }
        Globals { vars: out }
    }

    pub(crate) fn find(&self, addr: u64) -> Option<&Global> {
        let idx = self.vars.partition_point(|g| g.start <= addr);
        let g = self.vars.get(idx.checked_sub(1)?)?;
        (addr < g.end).then_some(g)
    }
}

/// Units below this many bytes in all are walked on one thread.
const PARALLEL_MIN: usize = 4 << 20;

/// The variables of `headers`' units in unit order, the second half of
/// the bytes walked on a helper thread when the machine has a CPU for it:
/// the index is built when the writing thread first needs it, and it has
/// to wait for all of it (a walk of the whole `.debug_info`).
fn in_parallel(
    dwarf: &gimli::Dwarf<R<'_>>,
    headers: &[gimli::UnitHeader<R<'_>>],
    min: usize,
) -> Vec<Global> {
    let total: usize = headers.iter().map(|h| h.length_including_self()).sum();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if total < min || cpus < 2 || headers.len() < 2 {
        return collect_units(dwarf, headers);
    }
    let (first, second) = headers.split_at(half_of_bytes(headers));
    std::thread::scope(|scope| {
        let helper = std::thread::Builder::new()
            .name("globals".into())
            .spawn_scoped(scope, || collect_units(dwarf, second));
        let mut vars = collect_units(dwarf, first);
        match helper.map(|h| h.join()) {
            Ok(Ok(rest)) => vars.extend(rest),
            // No thread to be had: this one does the rest.
            Err(_) => vars.extend(collect_units(dwarf, second)),
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
        }
        vars
    })
}

/// Where to split `headers` (two or more) so that each side has units and
/// about half of their bytes.
fn half_of_bytes(headers: &[gimli::UnitHeader<R<'_>>]) -> usize {
    let total: usize = headers.iter().map(|h| h.length_including_self()).sum();
    let mut half = 0;
    let mut bytes = 0;
    while half < headers.len() && bytes < total / 2 {
        bytes += headers[half].length_including_self();
        half += 1;
    }
    half.clamp(1, headers.len() - 1)
}

fn collect_units(dwarf: &gimli::Dwarf<R<'_>>, headers: &[gimli::UnitHeader<R<'_>>]) -> Vec<Global> {
    let mut vars = Vec::new();
    let mut sets = AbbreviationSets::default();
    for header in headers {
        let Ok(unit) = sets.unit(dwarf, *header) else {
            continue;
        };
        collect(gimli::UnitRef::new(dwarf, &unit), &mut vars);
    }
    vars
}

/// The variables of one unit. Most DIEs are not variables: they are
/// stepped over by the fast walk, and only variables are read with gimli
/// (gimli reads every attribute of a DIE it skips).
fn collect(unit: gimli::UnitRef<'_, R<'_>>, out: &mut Vec<Global>) {
    let Ok(input) = unit
        .header
        .range_from(gimli::UnitOffset(unit.header.header_size())..)
    else {
        return;
    };
    let mut walk = DieWalk::new(
        &unit.header,
        &unit.abbreviations,
        input.slice(),
        may_have_address,
    );
    while let Some(die) = walk.next_wanted() {
        match variable(unit, gimli::UnitOffset(die.offset)) {
            Ok(Some(global)) => out.push(global),
            Ok(None) => {}
            // The rest of the unit is not read past a variable gimli
            // cannot read.
            Err(_) => return,
        }
    }
}

/// Variables whose location can be a single-address expression: those with
/// a `DW_AT_location` of an expression form (`exprloc`, or a block, which
/// gimli reads as an expression for DWARF 2 and 3). Variables with location
/// lists and declarations without a location are not read at all.
#[allow(non_upper_case_globals)]
fn may_have_address(abbrev: &gimli::Abbreviation) -> bool {
    use gimli::constants::*;
    abbrev.tag() == DW_TAG_variable
        && abbrev.attributes().iter().any(|a| {
            a.name() == DW_AT_location
                && matches!(
                    a.form(),
                    DW_FORM_exprloc
                        | DW_FORM_block
                        | DW_FORM_block1
                        | DW_FORM_block2
                        | DW_FORM_block4
                )
        })
}

/// The variable at `offset`, if it has a single address.
fn variable(
    unit: gimli::UnitRef<'_, R<'_>>,
    offset: gimli::UnitOffset,
) -> gimli::Result<Option<Global>> {
    let mut entries = unit.entries_raw(Some(offset))?;
    let Some(abbrev) = entries.read_abbreviation()? else {
        return Ok(None);
    };
    // The first of each attribute, as `DebuggingInformationEntry::attr`.
    let (mut location, mut ty, mut line, mut file) = (None, None, None, None);
    for spec in abbrev.attributes() {
        let attr = entries.read_attribute(*spec)?;
        let slot = match attr.name() {
            gimli::DW_AT_location => &mut location,
            gimli::DW_AT_type => &mut ty,
            gimli::DW_AT_decl_line => &mut line,
            gimli::DW_AT_decl_file => &mut file,
            _ => continue,
        };
        slot.get_or_insert(attr.value());
    }
    let Some(AttributeValue::Exprloc(expr)) = location else {
        return Ok(None);
    };
    let Some(start) = single_address(unit, expr) else {
        return Ok(None);
    };
    if start == u64::MAX {
        return Ok(None);
    }
    let size = ty.and_then(|t| type_size(unit, t, 0)).unwrap_or(1).max(1);
    let line = line.map_or(0, |v| v.udata_value().unwrap_or(0) as u32);
    let file = match file {
        Some(AttributeValue::FileIndex(i)) => file_path(unit, i),
        Some(v) => v.udata_value().and_then(|i| file_path(unit, i)),
        None => None,
    };
    Ok(Some(Global {
        start,
        end: start.saturating_add(size),
        file: file.map(Text::from),
        line,
    }))
}

/// The address of an expression that is exactly one `DW_OP_addr`/`DW_OP_addrx`.
fn single_address(unit: gimli::UnitRef<'_, R<'_>>, expr: gimli::Expression<R<'_>>) -> Option<u64> {
    let mut ops = expr.operations(unit.encoding());
    let addr = match ops.next().ok()?? {
        gimli::Operation::Address { address } => address,
        gimli::Operation::AddressIndex { index } => unit.address(index).ok()?,
        _ => return None,
    };
    match ops.next() {
        Ok(None) => Some(addr),
        _ => None,
    }
}

fn type_size(
    unit: gimli::UnitRef<'_, R<'_>>,
    ty: AttributeValue<R<'_>>,
    depth: usize,
) -> Option<u64> {
    if depth > MAX_TYPE_DEPTH {
        return None;
    }
    let AttributeValue::UnitRef(offset) = ty else {
        return None;
    };
    let entry = unit.entry(offset).ok()?;
    if let Some(size) = entry
        .attr_value(gimli::DW_AT_byte_size)
        .and_then(|v| v.udata_value())
    {
        return Some(size);
    }
    match entry.tag() {
        gimli::DW_TAG_pointer_type
        | gimli::DW_TAG_reference_type
        | gimli::DW_TAG_rvalue_reference_type
        | gimli::DW_TAG_ptr_to_member_type => Some(u64::from(unit.encoding().address_size)),
        gimli::DW_TAG_typedef
        | gimli::DW_TAG_const_type
        | gimli::DW_TAG_volatile_type
        | gimli::DW_TAG_restrict_type
        | gimli::DW_TAG_atomic_type
        | gimli::DW_TAG_immutable_type => {
            type_size(unit, entry.attr_value(gimli::DW_AT_type)?, depth + 1)
        }
        gimli::DW_TAG_array_type => {
            let element = type_size(unit, entry.attr_value(gimli::DW_AT_type)?, depth + 1)?;
            let mut count: u64 = 1;
            let mut tree = unit.entries_tree(Some(offset)).ok()?;
            let root = tree.root().ok()?;
            let mut children = root.children();
            while let Ok(Some(child)) = children.next() {
                let e = child.entry();
                if e.tag() != gimli::DW_TAG_subrange_type {
                    continue;
                }
                let n = if let Some(c) = e
                    .attr_value(gimli::DW_AT_count)
                    .and_then(|v| v.udata_value())
                {
                    c
                } else {
                    let upper = e.attr_value(gimli::DW_AT_upper_bound)?.udata_value()?;
                    let lower = e
                        .attr_value(gimli::DW_AT_lower_bound)
                        .and_then(|v| v.udata_value())
                        .unwrap_or(0);
                    upper.checked_sub(lower)?.checked_add(1)?
                };
                count = count.checked_mul(n)?;
            }
            element.checked_mul(count)
        }
        _ => None,
    }
}

/// The full path of file `index` of the unit's line table, joined as the
/// frames of code lookups join theirs.
fn file_path(unit: gimli::UnitRef<'_, R<'_>>, index: u64) -> Option<String> {
    let program = unit.line_program.as_ref()?;
    let header = program.header();
    let mut path = String::new();
    super::lines::file_path(unit, header.file(index)?, header, &mut path).ok()?;
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::{Object, ObjectSection};

    /// Split between two threads, the variables come out as one thread
    /// finds them, in the same order.
    #[test]
    fn two_threads_find_what_one_does() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/elf/bin/two_units");
        let data = std::fs::read(path).unwrap();
        let obj = object::File::parse(&*data).unwrap();
        let sections = gimli::DwarfSections::load(|id| -> Result<_, gimli::Error> {
            let bytes = obj
                .section_by_name(id.name())
                .and_then(|s| s.uncompressed_data().ok())
                .unwrap_or_default();
            Ok(bytes.into_owned())
        })
        .unwrap();
        let dwarf = sections.borrow(|s| gimli::EndianSlice::new(s, gimli::RunTimeEndian::Little));
        let mut headers = Vec::new();
        let mut units = dwarf.units();
        while let Some(header) = units.next().unwrap() {
            headers.push(header);
        }
        assert_eq!(half_of_bytes(&headers), 1, "{} units", headers.len());
        let alone = collect_units(&dwarf, &headers);
        assert!(alone.len() >= 3, "{} variables", alone.len());
        assert_eq!(in_parallel(&dwarf, &headers, 0), alone);
    }
}
