//! One module's symbol data: the mapped files (binary, separate debug file,
//! dwz supplementary file, DWARF package), our lookup engine over their
//! DWARF (zero-copy, each unit read on first use), an `addr2line::Context`
//! for what the engine leaves to it, and the merged symbol table.

use std::borrow::Cow;
use std::cell::{OnceCell, RefCell};
use std::sync::Arc;

use crate::base::mapped::FileMap;
use addr2line::{Context, LookupContinuation, LookupResult, SplitDwarfLoad};
use gimli::{EndianSlice, RunTimeEndian};
use object::{CompressionFormat, Object, ObjectSection};
use typed_arena::Arena;

use super::engine::{Engine, Found};
use super::file::{self, Mapped};
use super::globals::Globals;
use super::guard::{self, DepthGuard, MAX_DEPTH, unit_depth_ok};
use super::line0::Line0Columns;
use super::reloc;
use super::search::dwo_paths;
use super::symtab::Symbols;
use crate::symbols::{
    CodeInfo, CodeWant, DataInfo, DataWant, Frame, Interner, Miss, SymbolHit, SymbolSource, Text,
    lossy,
};

type R<'a> = EndianSlice<'a, RunTimeEndian>;

/// Why DWARF sections could not be loaded.
#[derive(Debug)]
struct LoadError(String);

impl From<gimli::Error> for LoadError {
    fn from(e: gimli::Error) -> Self {
        LoadError(format!("DWARF: {e}"))
    }
}

impl From<String> for LoadError {
    fn from(e: String) -> Self {
        LoadError(e)
    }
}

/// A decompressed section may be at most this many times larger than its
/// compressed bytes (zlib tops out near 1000x; real DWARF is under 20x)...
const MAX_EXPANSION: u64 = 256;
/// ...and at most this large in absolute terms.
const MAX_SECTION: u64 = 4 << 30;

/// The files that make up a module, in the roles they play.
pub(crate) struct Parts {
    /// Every ELF file of the module; `files[0]` is the one that was found.
    pub files: Vec<Mapped>,
    /// Index in `files` of the file whose DWARF is used.
    pub dwarf: Option<usize>,
    /// The dwz supplementary file (`.gnu_debugaltlink`).
    pub sup: Option<Mapped>,
    /// A DWARF package (`.dwp`).
    pub dwp: Option<Mapped>,
}

/// Owns every byte the parsed structures borrow.
struct Owner {
    parts: Parts,
    /// Decompressed sections.
    data: Arena<Vec<u8>>,
    /// `.dwo` files mapped on demand.
    dwo_maps: Arena<Arc<FileMap>>,
    /// The same, by path, to tell whether one was truncated.
    dwo_list: std::sync::Mutex<Vec<(std::path::PathBuf, Arc<FileMap>)>>,
}

impl Owner {
    /// The first of the module's mapped files that was truncated.
    fn truncated(&self) -> Option<String> {
        let p = &self.parts;
        let fixed = p.files.iter().chain(&p.sup).chain(&p.dwp);
        if let Some(m) = fixed.into_iter().find(|m| m.map.faulted()) {
            return Some(m.display());
        }
        let dwos = self.dwo_list.lock().unwrap_or_else(|e| e.into_inner());
        dwos.iter()
            .find(|(_, m)| m.faulted())
            .map(|(path, _)| path.display().to_string())
    }
}

struct Loaded<'a> {
    /// The DWARF, set up by the first lookup that needs it: a module whose
    /// answers all come from elsewhere (the filter's read-ahead) or from
    /// the symbol table (data lookups) never pays for it.
    debug: OnceCell<Debug<'a>>,
    /// Global variables, indexed on the first data lookup.
    globals: OnceCell<Globals>,
    dwp: Option<gimli::DwarfPackage<R<'a>>>,
    symbols: Symbols<'a>,
    /// Symbol names and files as answers carry them, made once each.
    texts: RefCell<Interner<'a>>,
    /// Columns of line-0 rows, which addr2line does not report.
    line0: Line0Columns<R<'a>>,
}

/// A module's DWARF, ready for lookups.
#[derive(Default)]
struct Debug<'a> {
    /// The sections, for the guard and our own lookups.
    dwarf: Option<gimli::Dwarf<R<'a>>>,
    /// Knows which units cover an address; refuses units nested too deeply
    /// for addr2line's recursion.
    guard: Option<DepthGuard<'a>>,
    /// Our own lookups, unit by unit (see `engine`).
    engine: Option<Engine<'a>>,
    /// A copy of the sections whose abbreviation sets are all parsed up
    /// front, for the global index and addr2line, made on first use.
    populated: OnceCell<Arc<gimli::Dwarf<R<'a>>>>,
    /// addr2line's context, made by the first lookup our engine leaves
    /// to it.
    full: OnceCell<Result<Full<'a>, String>>,
    /// Why DWARF could not be used, if it could not.
    error: Option<String>,
}

struct Full<'a> {
    ctx: Context<R<'a>>,
    dwarf: Arc<gimli::Dwarf<R<'a>>>,
}

impl<'a> Debug<'a> {
    fn load(owner: &'a Owner) -> Debug<'a> {
        let parts = &owner.parts;
        let Some(m) = parts.dwarf.and_then(|d| parts.files.get(d)) else {
            return Debug::default();
        };
        let loaded = file::parse(&m.map)
            .map_err(|e| LoadError(e.to_string()))
            .and_then(|obj| load_dwarf(owner, &obj));
        match loaded {
            Ok((dwarf, guard)) => Debug {
                dwarf: Some(dwarf),
                engine: Some(Engine::new(&guard)),
                guard: Some(guard),
                ..Debug::default()
            },
            Err(LoadError(e)) => Debug {
                error: Some(e),
                ..Debug::default()
            },
        }
    }

    fn populated(&self) -> Option<&Arc<gimli::Dwarf<R<'a>>>> {
        let dwarf = self.dwarf.as_ref()?;
        Some(self.populated.get_or_init(|| {
            let mut copy = copy_sections(dwarf);
            copy.populate_abbreviations_cache(gimli::AbbreviationsCacheStrategy::All);
            Arc::new(copy)
        }))
    }

    /// addr2line's context and the sections it reads, set up on first use.
    fn full(&self) -> Result<&Full<'a>, &str> {
        let Some(dwarf) = self.populated() else {
            return Err(self.error.as_deref().unwrap_or("no DWARF"));
        };
        self.full
            .get_or_init(|| {
                let copy = dwarf.clone();
                Context::from_arc_dwarf(copy.clone())
                    .map(|ctx| Full { ctx, dwarf: copy })
                    .map_err(|e| format!("DWARF: {e}"))
            })
            .as_ref()
            .map_err(String::as_str)
    }
}

/// The same sections with an empty abbreviations cache.
fn copy_sections<'a>(d: &gimli::Dwarf<R<'a>>) -> gimli::Dwarf<R<'a>> {
    gimli::Dwarf {
        debug_abbrev: d.debug_abbrev,
        debug_addr: d.debug_addr,
        debug_aranges: d.debug_aranges,
        debug_info: d.debug_info,
        debug_line: d.debug_line,
        debug_line_str: d.debug_line_str,
        debug_macinfo: d.debug_macinfo,
        debug_macro: d.debug_macro,
        debug_names: d.debug_names,
        debug_str: d.debug_str,
        debug_str_offsets: d.debug_str_offsets,
        debug_types: d.debug_types,
        locations: d.locations,
        ranges: d.ranges,
        file_type: d.file_type,
        sup: d.sup.clone(),
        abbreviations_cache: gimli::AbbreviationsCache::new(),
    }
}

self_cell::self_cell!(
    struct Cell {
        owner: Owner,
        #[not_covariant]
        dependent: Loaded,
    }
);

/// The ELF/DWARF [`SymbolSource`].
pub struct ElfSource {
    cell: Cell,
    origin: String,
    step: u64,
    /// No DWARF and no `.symtab` in any of the module's files.
    dynamic_only: bool,
}

impl ElfSource {
    pub(crate) fn new(parts: Parts) -> Result<ElfSource, Miss> {
        let mut origin = parts.files[0].display();
        if let Some(i) = parts.dwarf.filter(|&i| i != 0) {
            origin.push_str(&format!(" (debug info: {})", parts.files[i].display()));
        }
        let first = file::parse(&parts.files[0].map)
            .map_err(|e| file::unreadable(&parts.files[0].path, e))?;
        let step = file::return_address_step(Some(first.architecture()));
        let dynamic_only = parts.dwarf.is_none()
            && !parts.files.iter().any(|f| {
                file::parse(&f.map).is_ok_and(|obj| {
                    use object::ObjectSection;
                    obj.section_by_name(".symtab").is_some_and(|s| s.size() > 0)
                })
            });
        let owner = Owner {
            parts,
            data: Arena::new(),
            dwo_maps: Arena::new(),
            dwo_list: std::sync::Mutex::new(Vec::new()),
        };
        let cell = Cell::try_new(owner, |owner| Loaded::new(owner))?;
        Ok(ElfSource {
            cell,
            origin,
            step,
            dynamic_only,
        })
    }
}

impl ElfSource {
    /// The frames for `addr` from our own lookups; `None` leaves the
    /// lookup to addr2line.
    fn own_frames(&self, debug: &Debug<'_>, addr: u64, want: CodeWant) -> Option<Found> {
        let (dwarf, guard, engine) = (
            debug.dwarf.as_ref()?,
            debug.guard.as_ref()?,
            debug.engine.as_ref()?,
        );
        if addr >= guard::NO_CODE {
            return None;
        }
        let mut found = engine.find_frames(dwarf, guard, addr).ok()?;
        // The innermost frame on a line-0 row: LLVM prints the row's
        // column, addr2line drops it.
        if let Found::Frames(frames, column) = &mut found
            && let Some(first) = frames.first_mut()
            && first.line == 0
            && want.line0_columns
        {
            first.column = *column;
        }
        Some(found)
    }

    /// The frames for `addr` from addr2line.
    fn context_frames<'a>(
        &self,
        owner: &'a Owner,
        loaded: &Loaded<'a>,
        full: &Full<'a>,
        addr: u64,
        want: CodeWant,
    ) -> Result<Vec<Frame>, String> {
        let ctx = &full.ctx;
        let mut lookup = ctx.find_frames(addr);
        let found = loop {
            match lookup {
                LookupResult::Output(r) => break r,
                LookupResult::Load { load, continuation } => {
                    let dwo = loaded.load_dwo(owner, &load);
                    lookup = continuation.resume(dwo);
                }
            }
        };
        let mut iter = found.map_err(|e| format!("DWARF: {e}"))?;
        let mut frames = Vec::new();
        loop {
            let f = match iter.next() {
                Ok(Some(f)) => f,
                Ok(None) => return Ok(frames),
                // What was found before the error is kept.
                Err(e) if frames.is_empty() => return Err(format!("DWARF: {e}")),
                Err(_) => return Ok(frames),
            };
            frames.push(Frame {
                function: f.function.as_ref().map(|n| lossy(n.name.slice())),
                file: f.location.as_ref().and_then(|l| l.file).map(Text::from),
                line: f.location.as_ref().and_then(|l| l.line).unwrap_or(0),
                column: match &f.location {
                    // The innermost frame on a line-0 row: LLVM prints the
                    // row's column, addr2line drops it.
                    Some(l) if l.line.is_none() && frames.is_empty() && want.line0_columns => {
                        loaded
                            .line0
                            .column(ctx, &full.dwarf, addr, |l| loaded.load_dwo(owner, l))
                            .unwrap_or(0)
                    }
                    l => l.as_ref().and_then(|l| l.column).unwrap_or(0),
                },
            });
        }
    }
}

#[cfg(test)]
impl ElfSource {
    /// `addr` answered by our own lookups (`None`: left to addr2line) and
    /// by addr2line (`None` when the guard refuses the address); `None`
    /// for addresses neither would be asked.
    #[allow(clippy::type_complexity)]
    pub(crate) fn both_ways(
        &self,
        addr: u64,
    ) -> Option<(Option<Found>, Option<Result<Vec<Frame>, String>>)> {
        self.cell.with_dependent(|owner, loaded| {
            let debug = loaded.debug.get_or_init(|| Debug::load(owner));
            let guard = debug.guard.as_ref()?;
            if addr >= guard::NO_CODE {
                return None;
            }
            let want = CodeWant::default();
            let own = self.own_frames(debug, addr, want);
            let context = guard.address_ok(debug.dwarf.as_ref()?, addr).then(|| {
                let full = debug.full().map_err(str::to_owned);
                full.and_then(|full| self.context_frames(owner, loaded, full, addr, want))
            });
            Some((own, context))
        })
    }
}

impl<'a> Loaded<'a> {
    fn new(owner: &'a Owner) -> Result<Loaded<'a>, Miss> {
        let parts = &owner.parts;
        let mut objects = Vec::with_capacity(parts.files.len());
        for m in &parts.files {
            objects.push(file::parse(&m.map).map_err(|e| file::unreadable(&m.path, e))?);
        }
        let dwp = parts.dwp.as_ref().and_then(|m| {
            let obj = file::parse(&m.map).ok()?;
            let endian = endian_of(&obj);
            let empty = EndianSlice::new(&[][..], endian);
            gimli::DwarfPackage::load(
                |id| section(owner, &obj, id.dwo_name().unwrap_or(""), endian),
                empty,
            )
            .ok()
        });
        // Symbols: the DWARF file first, then the others (later ones win
        // exact ties, so the found file has the last word as in LLVM).
        let mut objects: Vec<Option<object::File<'a>>> = objects.into_iter().map(Some).collect();
        let mut order: Vec<object::File<'a>> = Vec::with_capacity(objects.len());
        if let Some(d) = parts.dwarf {
            order.extend(objects.get_mut(d).and_then(Option::take));
        }
        order.extend(objects.into_iter().flatten());
        order.reverse();
        let symbols = Symbols::new(order);
        Ok(Loaded {
            debug: OnceCell::new(),
            globals: OnceCell::new(),
            dwp,
            symbols,
            texts: RefCell::default(),
            line0: Line0Columns::default(),
        })
    }

    /// Load a split DWARF unit: from the package if there is one, else the
    /// `.dwo` file named by the skeleton (relative to its comp dir, then
    /// next to the module's files), checking the DWO ID.
    fn load_dwo(
        &self,
        owner: &'a Owner,
        load: &SplitDwarfLoad<R<'a>>,
    ) -> Option<Arc<gimli::Dwarf<R<'a>>>> {
        if let Some(dwp) = &self.dwp
            && let Ok(Some(cu)) = dwp.find_cu(load.dwo_id, &load.parent)
        {
            let ok = match cu.units().next() {
                Ok(Some(header)) => cu.unit(header).is_ok_and(|u| unit_depth_ok(&u)),
                _ => true,
            };
            return ok.then(|| Arc::new(cu));
        }
        let candidates = dwo_paths(
            load.path.as_ref()?.slice(),
            load.comp_dir.as_ref().map(|d| d.slice()),
            owner.parts.files.iter().filter_map(|m| m.path.parent()),
        );
        for path in candidates {
            let Ok(m) = Mapped::open(&path) else { continue };
            owner
                .dwo_list
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((path.clone(), m.map.clone()));
            let map: &'a FileMap = owner.dwo_maps.alloc(m.map);
            let Ok(obj) = file::parse(map) else { continue };
            let endian = endian_of(&obj);
            let Ok(mut dwarf) =
                gimli::Dwarf::load(|id| section(owner, &obj, id.dwo_name().unwrap_or(""), endian))
            else {
                continue;
            };
            let Ok(Some(header)) = dwarf.units().next() else {
                continue;
            };
            let Ok(unit) = dwarf.unit(header) else {
                continue;
            };
            if unit.dwo_id != Some(load.dwo_id) || !unit_depth_ok(&unit) {
                continue;
            }
            dwarf.make_dwo(&load.parent);
            return Some(Arc::new(dwarf));
        }
        None
    }
}

/// The DWARF of `obj` and the depth guard (whose ranges for units that
/// declare none are added to `.debug_aranges` for addr2line).
fn load_dwarf<'a>(
    owner: &'a Owner,
    obj: &object::File<'a>,
) -> Result<(gimli::Dwarf<R<'a>>, DepthGuard<'a>), LoadError> {
    let endian = endian_of(obj);
    let mut dwarf = load_plain_dwarf(owner, obj)?;
    let big = endian == RunTimeEndian::Big;
    if let Some(clean) =
        guard::clean_aranges(gimli::Section::reader(&dwarf.debug_aranges).slice(), big)
    {
        let clean: &'a [u8] = owner.data.alloc(clean);
        dwarf.debug_aranges = EndianSlice::new(clean, endian).into();
    }
    let (guard, extra) = DepthGuard::build(&dwarf);
    if !extra.is_empty() {
        let mut aranges = gimli::Section::reader(&dwarf.debug_aranges)
            .slice()
            .to_vec();
        aranges.extend_from_slice(&extra);
        let aranges: &'a [u8] = owner.data.alloc(aranges);
        dwarf.debug_aranges = EndianSlice::new(aranges, endian).into();
    }
    Ok((dwarf, guard))
}

/// The DWARF of `obj` and its supplementary file, as they are.
fn load_plain_dwarf<'a>(
    owner: &'a Owner,
    obj: &object::File<'a>,
) -> Result<gimli::Dwarf<R<'a>>, LoadError> {
    let endian = endian_of(obj);
    let mut dwarf = gimli::Dwarf::load(|id| section(owner, obj, id.name(), endian))?;
    if let Some(sup) = &owner.parts.sup {
        let sup_obj = file::parse(&sup.map)?;
        let sup_endian = endian_of(&sup_obj);
        dwarf.load_sup(|id| section(owner, &sup_obj, id.name(), sup_endian))?;
    }
    Ok(dwarf)
}

pub(crate) fn endian_of(obj: &object::File<'_>) -> RunTimeEndian {
    if obj.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    }
}

/// A section's bytes: borrowed from the map, or decompressed into the arena
/// (bounded). Missing sections are empty.
fn section<'a>(
    owner: &'a Owner,
    obj: &object::File<'a>,
    name: &str,
    endian: RunTimeEndian,
) -> Result<R<'a>, LoadError> {
    let empty = Ok(EndianSlice::new(&[][..], endian));
    if name.is_empty() {
        return empty;
    }
    let Some(sec) = obj.section_by_name(name) else {
        return empty;
    };
    let compressed = sec
        .compressed_data()
        .map_err(|e| LoadError(format!("{name}: {e}")))?;
    if compressed.format != CompressionFormat::None {
        let limit = (compressed.data.len() as u64)
            .saturating_mul(MAX_EXPANSION)
            .min(MAX_SECTION);
        if compressed.uncompressed_size > limit {
            return Err(LoadError(format!(
                "{name}: claims {} bytes uncompressed from {}",
                compressed.uncompressed_size,
                compressed.data.len()
            )));
        }
    }
    let data = compressed
        .decompress()
        .map_err(|e| LoadError(format!("{name}: {e}")))?;
    let data: &'a [u8] = match (reloc::relocated(obj, &sec, &data), data) {
        (Some(v), _) | (None, Cow::Owned(v)) => owner.data.alloc(v),
        (None, Cow::Borrowed(b)) => b,
    };
    Ok(EndianSlice::new(data, endian))
}

impl<'a> Loaded<'a> {
    /// The symbol covering `addr`, as answers carry it.
    fn symbol(&self, addr: u64) -> Option<SymbolHit> {
        let s = self.symbols.find(addr)?;
        let mut texts = self.texts.borrow_mut();
        Some(SymbolHit {
            name: texts.text(s.name),
            address: s.addr,
            size: s.size,
            file: s.file.map(|f| texts.text(f)),
        })
    }
}

impl SymbolSource for ElfSource {
    fn only_dynamic_symbols(&self) -> bool {
        self.dynamic_only
    }

    fn origin(&self) -> String {
        self.origin.clone()
    }

    /// The first of the module's files: the image itself where there is one.
    fn image(&self) -> Option<std::path::PathBuf> {
        let files = &self.cell.borrow_owner().parts.files;
        files.first().map(|f| f.path.clone())
    }

    fn lookup_code(&self, addr: u64, want: CodeWant) -> Result<CodeInfo, Miss> {
        self.cell.with_dependent(|owner, loaded| {
            let debug = loaded.debug.get_or_init(|| Debug::load(owner));
            let mut frames = Vec::new();
            let mut error = debug.error.clone();
            let too_deep = || {
                Some(format!(
                    "DWARF nested deeper than {MAX_DEPTH} levels here; ignored"
                ))
            };
            match self.own_frames(debug, addr, want) {
                Some(Found::Frames(found, _)) => frames = found,
                Some(Found::TooDeep) => error = too_deep(),
                None => {
                    let guarded = match (&debug.guard, &debug.dwarf) {
                        (Some(guard), Some(dwarf)) => guard.address_ok(dwarf, addr),
                        _ => true,
                    };
                    if !guarded {
                        error = too_deep();
                    }
                    // addr2line probes `[addr, addr + 1)`: the last address
                    // of the space cannot be asked (and no code lives
                    // there), nor the one before, where the guard parks the
                    // units without code (see `DepthGuard::build`).
                    let askable = guarded && addr < guard::NO_CODE && debug.dwarf.is_some();
                    if askable
                        && let Err(e) = debug
                            .full()
                            .map_err(str::to_owned)
                            .and_then(|full| self.context_frames(owner, loaded, full, addr, want))
                            .map(|found| frames = found)
                    {
                        error = Some(e);
                    }
                }
            }
            let symbol = loaded.symbol(addr);
            if frames.is_empty() && symbol.is_none() {
                return Err(match error {
                    Some(e) => Miss::BadDebugInfo(e),
                    None => Miss::NoInfo,
                });
            }
            Ok(CodeInfo { frames, symbol })
        })
    }

    fn lookup_data(&self, addr: u64, want: DataWant) -> Result<DataInfo, Miss> {
        let mut info = self.cell.with_dependent(|_owner, loaded| {
            let symbol = loaded.symbol(addr).ok_or(Miss::NoInfo)?;
            Ok(DataInfo {
                decl_file: symbol.file.clone(),
                symbol: Some(symbol),
                decl_line: 0,
            })
        })?;
        if want.declaration
            && let Some((file, line)) = self.data_declaration(addr)
        {
            info.decl_file = file;
            info.decl_line = line;
        }
        Ok(info)
    }

    fn return_address_step(&self) -> u64 {
        self.step
    }

    fn truncated(&self) -> Option<String> {
        self.cell.borrow_owner().truncated()
    }
}

impl ElfSource {
    /// The declaration (file, line) of the global at `addr`, when the DWARF
    /// tells it: an index over every DIE, built on first use.
    fn data_declaration(&self, addr: u64) -> Option<(Option<Text>, u32)> {
        self.cell.with_dependent(|owner, loaded| {
            let debug = loaded.debug.get_or_init(|| Debug::load(owner));
            let dwarf = debug.populated()?;
            let global = loaded
                .globals
                .get_or_init(|| Globals::build(dwarf))
                .find(addr)
                .filter(|g| g.line != 0)?;
            Some((global.file.clone(), global.line))
        })
    }
}
