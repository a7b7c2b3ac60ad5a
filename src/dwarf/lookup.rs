//! Lookups: which units cover an address, each unit's functions and line
//! table read on first use and kept, split units loaded from their `.dwo`
//! file or package when first searched, and names followed into other
//! units and the supplementary file.
//!
//! Units are tried in addr2line's order and a split unit is read as
//! addr2line reads it (functions from the `.dwo`, lines and files from the
//! skeleton), following its design (Apache-2.0 OR MIT); no code is copied.

use std::sync::{Arc, Mutex, OnceLock};

use gimli::UnitRef;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use super::functions::{Function, Functions, Gathered};
use super::lines::{Lines, Paths};
use super::units::{AbbreviationSets, MAX_DEPTH, UnitIndex};
use super::{Error, SplitFiles, Sure};
use crate::base::lock;
use crate::symbols::{Frame, Frames, Interner, Name};

use super::Reader as R;

/// What a lookup found.
#[derive(Debug, PartialEq)]
pub(crate) enum Found {
    /// Innermost frame first, and the column of the innermost line row
    /// (which addr2line drops when the row's line is 0).
    Frames(Frames, u32),
    /// A unit covering the address nests deeper than [`MAX_DEPTH`].
    TooDeep,
}

/// Names kept at most; the table is refilled when full.
pub(crate) const NAMES_MAX: usize = 1 << 18;

/// A parsed unit, shared by the lookups that hold it.
type SharedUnit<'a> = Arc<gimli::Unit<R<'a>>>;

/// One file's sections and units (the module's DWARF file, or its dwz
/// supplementary file).
struct File<'a> {
    dwarf: Arc<gimli::Dwarf<R<'a>>>,
    units: UnitIndex<'a>,
    /// Parsed unit headers and root DIEs, by index in `units`.
    /// (Each cell a word until used: a file of many tiny units costs a
    /// few words per unit.)
    parsed: Vec<OnceLock<Box<Sure<SharedUnit<'a>>>>>,
    abbreviations: Mutex<AbbreviationSets>,
}

impl<'a> File<'a> {
    fn new(dwarf: Arc<gimli::Dwarf<R<'a>>>) -> File<'a> {
        let units = UnitIndex::build(&dwarf);
        File {
            parsed: (0..units.len()).map(|_| OnceLock::new()).collect(),
            dwarf,
            units,
            abbreviations: Mutex::default(),
        }
    }

    /// Unit `index`, parsed once.
    fn unit_ref(&self, index: usize) -> Sure<&SharedUnit<'a>> {
        let cell = self
            .parsed
            .get(index)
            .ok_or(Error::Malformed("unit index"))?;
        let parsed = cell.get_or_init(|| Box::new(self.parse(index)));
        (**parsed).as_ref().map_err(|e| *e)
    }

    fn unit(&self, index: usize) -> Sure<SharedUnit<'a>> {
        self.unit_ref(index).cloned()
    }

    fn parse(&self, index: usize) -> Sure<SharedUnit<'a>> {
        let header = self.units.header(index)?;
        let unit = lock(&self.abbreviations).unit(&self.dwarf, header)?;
        Ok(Arc::new(unit))
    }
}

/// Which file a DIE lies in, for following its references.
#[derive(Clone, Copy)]
pub(crate) enum Within {
    Main,
    Sup,
    /// The split unit of main unit `n`.
    Split(u32),
}

impl Within {
    /// A number telling files apart in the name table.
    pub(crate) fn tag(self) -> u64 {
        match self {
            Within::Main => 0,
            Within::Sup => 1,
            Within::Split(n) => 2 + u64::from(n),
        }
    }
}

/// Where names are looked up: the engine, and the file of the DIE whose
/// references are followed.
#[derive(Clone, Copy)]
pub(crate) struct Names<'e, 'a> {
    pub engine: &'e Engine<'a>,
    pub within: Within,
}

impl<'a> Names<'_, 'a> {
    /// `bytes` as answers carry it, made once per string.
    pub(crate) fn name(&self, bytes: &'a [u8]) -> Name {
        lock(&self.engine.texts).name(bytes)
    }

    /// The name of the DIE at `target` in another unit of `self.within`.
    pub(crate) fn other_unit(
        &self,
        unit: UnitRef<'_, R<'a>>,
        target: gimli::DebugInfoOffset<usize>,
        links: usize,
    ) -> Sure<Option<R<'a>>> {
        let outside = Error::Malformed("reference outside every unit");
        let file = match self.within {
            Within::Main => &self.engine.main,
            Within::Sup => self.engine.sup.as_ref().ok_or(outside)?,
            // A split file holds one unit of code.
            Within::Split(_) => {
                let offset = target.to_unit_offset(&unit.header).ok_or(outside)?;
                return super::functions::name_entry(unit, self, offset, links);
            }
        };
        let index = file.units.unit_at(target.0).ok_or(outside)?;
        let other = file.unit(index)?;
        let offset = target.to_unit_offset(&other.header).ok_or(outside)?;
        super::functions::name_entry(UnitRef::new(&file.dwarf, &other), self, offset, links)
    }
}

/// The split unit of a skeleton, with the sections it reads.
pub(crate) struct SplitUnit<'a> {
    dwarf: Arc<gimli::Dwarf<R<'a>>>,
    unit: gimli::Unit<R<'a>>,
}

/// One unit's subprograms, nesting depth, and what lookups have read of it.
struct Searched<'a> {
    unit: SharedUnit<'a>,
    functions: Functions,
    too_deep: bool,
    lines: OnceLock<Sure<Option<Lines>>>,
    /// Parsed subprograms by index in `functions` (a word and a flag each
    /// until parsed).
    parsed: Box<[OnceLock<Box<Sure<Function>>>]>,
}

/// The units read so far.
pub(crate) struct Engine<'a> {
    main: File<'a>,
    sup: Option<File<'a>>,
    /// The DWARF package split units are looked up in first.
    package: Option<gimli::DwarfPackage<R<'a>>>,
    /// Functions and line tables of the main file's units, by index.
    /// (Boxed, as split units: a word per unit until it is searched.)
    searched: Vec<OnceLock<Box<Sure<Searched<'a>>>>>,
    /// The split units of skeleton units, by index, once looked for.
    split: Vec<OnceLock<Box<Option<SplitUnit<'a>>>>>,
    /// The name each abstract origin or specification leads to, by file
    /// and `.debug_info` offset, for the DIEs read for their names (a
    /// function declared once and defined in many places is named once).
    /// An inlined call named by its origin alone keeps its name itself
    /// (see [`super::functions::Inlined`]).
    pub(crate) names: Mutex<FxHashMap<(u64, usize), Option<Name>>>,
    /// Function names as answers carry them, made once each.
    texts: Mutex<Interner<'a>>,
    /// File names of the units' line tables, made once each.
    paths: Paths,
    /// Room for the inlined calls of the function being parsed (a thread
    /// finding it taken parses with room of its own).
    gathered: Mutex<Gathered>,
}

impl<'a> Engine<'a> {
    pub(crate) fn new(
        dwarf: gimli::Dwarf<R<'a>>,
        package: Option<gimli::DwarfPackage<R<'a>>>,
    ) -> Engine<'a> {
        let sup = dwarf.sup.clone().map(File::new);
        let main = File::new(Arc::new(dwarf));
        Engine {
            searched: (0..main.units.len()).map(|_| OnceLock::new()).collect(),
            split: (0..main.units.len()).map(|_| OnceLock::new()).collect(),
            main,
            sup,
            package,
            names: Mutex::default(),
            texts: Mutex::default(),
            paths: Paths::default(),
            gathered: Mutex::default(),
        }
    }

    pub(crate) fn dwarf(&self) -> &gimli::Dwarf<R<'a>> {
        &self.main.dwarf
    }

    /// The main file's units.
    pub(crate) fn units(&self) -> &UnitIndex<'a> {
        &self.main.units
    }

    pub(crate) fn has_sup(&self) -> bool {
        self.sup.is_some()
    }

    fn searched(&self, index: usize, files: &dyn SplitFiles<'a>) -> Sure<&Searched<'a>> {
        let cell = self
            .searched
            .get(index)
            .ok_or(Error::Malformed("unit index"))?;
        let search = || -> Sure<Searched<'a>> {
            let unit = self.main.unit(index)?;
            let functions_unit = match self.split_unit(index, &unit, files) {
                Some(s) => UnitRef::new(&s.dwarf, &s.unit),
                None => UnitRef::new(&self.main.dwarf, &unit),
            };
            let (functions, deepest) = Functions::parse(functions_unit)?;
            let parsed = functions.offsets.iter().map(|_| OnceLock::new()).collect();
            Ok(Searched {
                unit,
                functions,
                too_deep: deepest > MAX_DEPTH,
                lines: OnceLock::new(),
                parsed,
            })
        };
        let searched = cell.get_or_init(|| Box::new(search()));
        (**searched).as_ref().map_err(|e| *e)
    }

    /// The main file's units in section order (compile, skeleton and
    /// partial units), each with its split unit where it has one: the
    /// units whose functions `gsym create` converts. Units that cannot be
    /// read are left out.
    pub(crate) fn code_units<'i>(
        &'i self,
        files: &'i dyn SplitFiles<'a>,
    ) -> impl Iterator<Item = super::CodeUnit<'i, 'a>> + 'i {
        (0..self.main.units.len()).filter_map(move |index| {
            let unit = self.main.unit_ref(index).ok()?;
            let lines = UnitRef::new(&*self.main.dwarf, unit);
            let functions = match self.split_unit(index, unit, files) {
                Some(s) => UnitRef::new(&*s.dwarf, &s.unit),
                None => lines,
            };
            Some(super::CodeUnit { functions, lines })
        })
    }

    /// The split unit of main unit `index`, if it is a skeleton whose
    /// split unit can be found.
    fn split_unit(
        &self,
        index: usize,
        unit: &gimli::Unit<R<'a>>,
        files: &dyn SplitFiles<'a>,
    ) -> Option<&SplitUnit<'a>> {
        let id = unit.dwo_id?;
        self.split
            .get(index)?
            .get_or_init(|| Box::new(self.load_split(unit, id, files)))
            .as_ref()
            .as_ref()
    }

    /// The split unit of `skeleton`: from the package if there is one,
    /// else the first `.dwo` file offered whose unit has the skeleton's
    /// DWO ID. `None` when there is none: the skeleton answers alone
    /// (lines, no functions), as in addr2line.
    fn load_split(
        &self,
        skeleton: &gimli::Unit<R<'a>>,
        id: gimli::DwoId,
        files: &dyn SplitFiles<'a>,
    ) -> Option<SplitUnit<'a>> {
        let parent = &*self.main.dwarf;
        // The unit with the skeleton's ID (type units may come first).
        let with_unit = |dwarf: gimli::Dwarf<R<'a>>| -> Option<SplitUnit<'a>> {
            let mut headers = dwarf.units();
            let mut unit = loop {
                let header = headers.next().ok()??;
                if let Ok(unit) = dwarf.unit(header)
                    && unit.dwo_id == Some(id)
                {
                    break unit;
                }
            };
            unit.copy_relocated_attributes(skeleton);
            Some(SplitUnit {
                dwarf: Arc::new(dwarf),
                unit,
            })
        };
        if let Some(package) = &self.package
            && let Ok(Some(dwarf)) = package.find_cu(id, parent)
        {
            return with_unit(dwarf);
        }
        let name = skeleton.dwo_name().ok()??;
        let name = parent.attr_string(skeleton, name).ok()?.slice();
        let comp_dir = skeleton.comp_dir.map(|d| d.slice());
        let mut found = None;
        files.offer(name, comp_dir, &mut |mut dwarf| {
            dwarf.make_dwo(parent);
            found = with_unit(dwarf);
            found.is_some()
        });
        found
    }

    /// The frames for `probe`.
    pub(crate) fn find_frames(&self, probe: u64, files: &dyn SplitFiles<'a>) -> Sure<Found> {
        // Nearly always one unit: no allocation per lookup.
        let mut candidates: SmallVec<[(usize, &Searched<'a>); 4]> = SmallVec::new();
        for index in self.main.units.covering(probe) {
            let searched = self.searched(index, files)?;
            if !candidates.iter().any(|c| std::ptr::eq(c.1, searched)) {
                candidates.push((index, searched));
            }
        }
        // Every unit covering the address is checked first.
        if candidates.iter().any(|c| c.1.too_deep) {
            return Ok(Found::TooDeep);
        }
        for (index, searched) in candidates {
            if let Some(found) = self.in_unit(index, searched, probe)? {
                return Ok(found);
            }
        }
        Ok(Found::Frames(Frames::new(), 0))
    }

    /// Subprogram `i` of a searched unit, parsed once (a thread needing it
    /// while the other parses it waits for it).
    fn function<'s>(
        &self,
        searched: &'s Searched<'a>,
        unit: UnitRef<'_, R<'a>>,
        names: &Names<'_, 'a>,
        i: usize,
    ) -> Sure<&'s Function> {
        let slot = searched
            .parsed
            .get(i)
            .ok_or(Error::Malformed("function index"))?;
        let parsed = slot.get_or_init(|| {
            let offset = searched.functions.offsets[i];
            Box::new(match self.gathered.try_lock() {
                Ok(mut room) => Function::parse(unit, names, offset, &mut room),
                Err(_) => Function::parse(unit, names, offset, &mut Gathered::default()),
            })
        });
        (**parsed).as_ref().map_err(|e| *e)
    }

    /// The frames for `probe` from one unit; `None` when it has neither a
    /// function nor a line row there.
    fn in_unit(&self, index: usize, searched: &Searched<'a>, probe: u64) -> Sure<Option<Found>> {
        let unit = UnitRef::new(&self.main.dwarf, &searched.unit);
        let split = self
            .split
            .get(index)
            .and_then(|s| s.get()?.as_ref().as_ref());
        let (functions_unit, within) = match split {
            Some(s) => (
                UnitRef::new(&s.dwarf, &s.unit),
                Within::Split(u32::try_from(index).unwrap_or(u32::MAX)),
            ),
            None => (unit, Within::Main),
        };
        let names = Names {
            engine: self,
            within,
        };
        let function = match searched.functions.find(probe) {
            Some(i) => Some(self.function(searched, functions_unit, &names, i)?),
            None => None,
        };
        let lines = searched
            .lines
            .get_or_init(|| match &unit.line_program {
                Some(program) => Lines::parse(unit, program.clone(), &self.paths).map(Some),
                None => Ok(None),
            })
            .as_ref()
            .map_err(|e| *e)?
            .as_ref();
        let row = lines.and_then(|l| l.find(probe));
        if function.is_none() && row.is_none() {
            return Ok(None);
        }
        let file = |index: u64| lines.and_then(|l| l.file(index));
        // The frames allocated once, at their final number.
        let chain = function.as_ref().map(|f| f.inlined_chain(probe));
        let mut frames = Frames::with_capacity(chain.as_ref().map_or(0, |c| c.len()) + 1);
        let mut next = row.map(|r| Frame {
            function: None,
            file: file(r.file_index),
            line: r.line,
            column: if r.line != 0 { r.column } else { 0 },
        });
        let column = row.map_or(0, |r| r.column);
        let (Some(function), Some(chain)) = (&function, chain) else {
            frames.extend(next);
            return Ok(Some(Found::Frames(frames, column)));
        };
        for inlined in chain.into_iter().rev() {
            let mut frame = next.take().unwrap_or_default();
            frame.function = inlined.name(functions_unit, &names)?;
            frames.push(frame);
            next = Some(Frame {
                function: None,
                file: inlined.call_file().and_then(|i| file(i.into())),
                line: inlined.call_line,
                column: inlined.call_column,
            });
        }
        let mut frame = next.unwrap_or_default();
        frame.function = function.name.clone();
        frames.push(frame);
        Ok(Some(Found::Frames(frames, column)))
    }
}

#[cfg(test)]
impl<'a> Engine<'a> {
    /// Each main unit's subprograms with code, each parsed with the fast
    /// walk and with gimli alone, given to `compare` as the unit offset
    /// and the two [`Function::dump`]s.
    pub(crate) fn parse_functions_both_ways(
        &self,
        mut compare: impl FnMut(usize, Sure<String>, Sure<String>),
    ) {
        let mut gathered = Gathered::default();
        for index in 0..self.main.units.len() {
            let Ok(unit) = self.main.unit(index) else {
                continue;
            };
            let unit = UnitRef::new(&self.main.dwarf, &unit);
            let Ok((functions, _)) = Functions::parse(unit) else {
                continue;
            };
            let names = Names {
                engine: self,
                within: Within::Main,
            };
            for &offset in &functions.offsets {
                let mut parse = |fast| {
                    Function::parse_with(unit, &names, offset, &mut gathered, fast)
                        .map(|f| f.dump())
                };
                let fast = parse(true);
                let at = offset.to_debug_info_offset(&unit.header).map_or(0, |o| o.0);
                compare(at, fast, parse(false));
            }
        }
    }
}
