//! The index against addr2line, the reference: every fixture with DWARF
//! (split units and dwz files included), every address of its code, and
//! 10,000 addresses of each large file at hand (libc's debug file, and
//! `SYMFILTER_TEST_DWARF_FILE`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use object::{Object, ObjectSection, SectionKind};

use super::{DwarfIndex, LookupError, Reader, SplitFiles};
use crate::symbols::{Frame, Frames, Name, Text};

/// Bytes that live as long as the test process: the fixtures are small.
fn leak(bytes: Vec<u8>) -> &'static [u8] {
    Box::leak(bytes.into_boxed_slice())
}

pub(super) fn read(path: &Path) -> Option<&'static [u8]> {
    std::fs::read(path).ok().map(leak)
}

/// `obj`'s DWARF, decompressed; `dwo` for the `.dwo` section names.
pub(super) fn sections(obj: &object::File<'static>, dwo: bool) -> gimli::Dwarf<Reader<'static>> {
    let endian = if obj.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let load = |id: gimli::SectionId| -> Result<Reader<'static>, gimli::Error> {
        let name = if dwo {
            id.dwo_name().unwrap_or("")
        } else {
            id.name()
        };
        let data = obj
            .section_by_name(name)
            .and_then(|s| s.uncompressed_data().ok())
            .map_or(&[][..], |d| leak(d.into_owned()));
        Ok(gimli::EndianSlice::new(data, endian))
    };
    gimli::Dwarf::load(load).unwrap()
}

/// A fixture's DWARF with its supplementary file, if it names one that
/// lies beside it.
fn load(path: &Path) -> Option<gimli::Dwarf<Reader<'static>>> {
    let obj = object::File::parse(read(path)?).ok()?;
    if obj.kind() == object::ObjectKind::Relocatable || obj.section_by_name(".debug_info").is_none()
    {
        return None;
    }
    let mut dwarf = sections(&obj, false);
    if let Ok(Some((_, id))) = obj.gnu_debugaltlink() {
        // The file beside it with that build ID.
        let sup = std::fs::read_dir(path.parent()?)
            .ok()?
            .flatten()
            .filter_map(|e| read(&e.path()))
            .filter_map(|d| object::File::parse(d).ok())
            .find(|o| o.build_id().ok().flatten() == Some(id))
            .expect("supplementary file");
        dwarf.sup = Some(Arc::new(sections(&sup, false)));
    }
    Some(dwarf)
}

/// The DWARF package beside `path` (`X.dwp`), if there is one.
fn package(path: &Path) -> Option<gimli::DwarfPackage<Reader<'static>>> {
    let mut name = path.as_os_str().to_owned();
    name.push(".dwp");
    let obj = object::File::parse(read(Path::new(&name))?).unwrap();
    let empty = gimli::EndianSlice::new(&[][..], gimli::RunTimeEndian::Little);
    let load = |id: gimli::SectionId| -> Result<Reader<'static>, gimli::Error> {
        let data = obj
            .section_by_name(id.dwo_name().unwrap_or(""))
            .and_then(|s| s.data().ok())
            .unwrap_or(&[]);
        Ok(gimli::EndianSlice::new(data, gimli::RunTimeEndian::Little))
    };
    Some(gimli::DwarfPackage::load(load, empty).unwrap())
}

/// `.dwo` files where the ELF source looks: the name as it stands (under
/// the comp dir), then beside the fixture.
struct Beside(PathBuf);

impl Beside {
    fn candidates(&self, name: &[u8], comp_dir: Option<&[u8]>) -> Vec<PathBuf> {
        crate::elf::dwo_paths(name, comp_dir, [self.0.as_path()])
    }

    fn dwarf(path: &Path) -> Option<gimli::Dwarf<Reader<'static>>> {
        let obj = object::File::parse(read(path)?).ok()?;
        Some(sections(&obj, true))
    }
}

impl SplitFiles<'static> for Beside {
    fn offer(
        &self,
        name: &[u8],
        comp_dir: Option<&[u8]>,
        take: &mut dyn FnMut(gimli::Dwarf<Reader<'static>>) -> bool,
    ) {
        for path in self.candidates(name, comp_dir) {
            if let Some(dwarf) = Beside::dwarf(&path)
                && take(dwarf)
            {
                return;
            }
        }
    }
}

/// addr2line's answer, its split units loaded the same way.
fn reference(
    ctx: &addr2line::Context<Reader<'static>>,
    package: Option<&gimli::DwarfPackage<Reader<'static>>>,
    beside: &Beside,
    addr: u64,
) -> Result<Frames, String> {
    use addr2line::{LookupContinuation, LookupResult};
    let mut lookup = ctx.find_frames(addr);
    let found = loop {
        match lookup {
            LookupResult::Output(r) => break r,
            LookupResult::Load { load, continuation } => {
                let from_package = package
                    .and_then(|p| p.find_cu(load.dwo_id, &load.parent).ok().flatten())
                    .map(Arc::new);
                let dwo = from_package.or_else(|| {
                    let name = load.path.as_ref()?.slice();
                    let comp_dir = load.comp_dir.as_ref().map(|d| d.slice());
                    beside.candidates(name, comp_dir).iter().find_map(|path| {
                        let mut dwarf = Beside::dwarf(path)?;
                        let header = dwarf.units().next().ok()??;
                        (dwarf.unit(header).ok()?.dwo_id == Some(load.dwo_id)).then_some(())?;
                        dwarf.make_dwo(&load.parent);
                        Some(Arc::new(dwarf))
                    })
                });
                lookup = continuation.resume(dwo);
            }
        }
    };
    let mut iter = found.map_err(|e| e.to_string())?;
    let mut frames = Frames::new();
    while let Some(f) = iter.next().map_err(|e| e.to_string())? {
        frames.push(Frame {
            function: f
                .function
                .as_ref()
                .map(|n| Name::from(String::from_utf8_lossy(n.name.slice()).into_owned())),
            file: f.location.as_ref().and_then(|l| l.file).map(Text::from),
            line: f.location.as_ref().and_then(|l| l.line).unwrap_or(0),
            column: f.location.as_ref().and_then(|l| l.column).unwrap_or(0),
        });
    }
    Ok(frames)
}

/// Addresses in `path`'s executable sections: all of them, or `max`
/// spread evenly.
fn code_addresses(path: &Path, max: Option<u64>) -> Vec<u64> {
    let data = std::fs::read(path).unwrap();
    let obj = object::File::parse(&*data).unwrap();
    let text: Vec<(u64, u64)> = obj
        .sections()
        .filter(|s| s.kind() == SectionKind::Text)
        .map(|s| (s.address(), s.size()))
        .collect();
    let total: u64 = text.iter().map(|t| t.1).sum();
    let step = max.map_or(1, |max| total.div_ceil(max).max(1));
    text.iter()
        .flat_map(|&(start, size)| (start..start + size).step_by(step as usize))
        .collect()
}

/// Every file under `dir` with DWARF.
fn fixtures(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            fixtures(&path, out);
        } else if e.file_type().is_ok_and(|t| t.is_file())
            && std::fs::read(&path).is_ok_and(|d| {
                object::File::parse(&*d).is_ok_and(|o| {
                    o.section_by_name(".debug_info").is_some()
                        && o.section_by_name(".debug_info.dwo").is_none()
                })
            })
        {
            out.push(path);
        }
    }
}

/// Counts of what one file's comparison saw.
#[derive(Default, Debug)]
struct Seen {
    asked: usize,
    frames: usize,
    too_deep: usize,
    errors: usize,
}

/// The index over `path` against addr2line, at addresses of `image`'s code.
fn compare(path: &Path, image: &Path, max: Option<u64>) -> Seen {
    let mut seen = Seen::default();
    let Some(dwarf) = load(path) else {
        return seen;
    };
    let beside = Beside(path.parent().unwrap().to_owned());
    let index = DwarfIndex::new(load(path).unwrap(), package(path));
    let package = package(path);
    let ctx = addr2line::Context::from_dwarf(dwarf).unwrap();
    for addr in code_addresses(image, max) {
        seen.asked += 1;
        let ours = index.frames(addr, false, &beside);
        if ours == Err(LookupError::TooDeep) {
            // addr2line recurses once per level: not asked.
            seen.too_deep += 1;
            continue;
        }
        let theirs = reference(&ctx, package.as_ref(), &beside, addr);
        match (&ours, &theirs) {
            (Ok(ours), Ok(theirs)) => {
                seen.frames += ours.len();
                assert_eq!(ours, theirs, "{} at {addr:#x}", path.display());
            }
            (Err(_), Err(_)) => seen.errors += 1,
            _ => panic!("{} at {addr:#x}: {ours:?} vs {theirs:?}", path.display()),
        }
    }
    seen
}

#[test]
fn every_fixture_answers_as_addr2line_does() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut files = Vec::new();
    fixtures(&root, &mut files);
    files.sort();
    assert!(files.len() >= 40, "{files:?}");
    let mut frames = 0;
    let mut split = 0;
    let mut dwz = 0;
    for path in &files {
        let seen = compare(path, path, None);
        let name = path.strip_prefix(&root).unwrap().display().to_string();
        if name.contains("deep_") {
            assert!(seen.too_deep > 0, "{name}: {seen:?}");
        }
        if name.contains("split") {
            split += seen.frames;
        }
        if name.contains("dwz") {
            dwz += seen.frames;
        }
        frames += seen.frames;
    }
    assert!(
        frames > 30_000 && split > 500 && dwz > 100,
        "{frames} {split} {dwz}"
    );
}

/// A root DIE whose range attributes come in forms addr2line does not
/// take (a second `DW_AT_low_pc` as a section offset, where the fixture
/// has its `DW_AT_addr_base`, so the first low pc reads `.debug_addr` at
/// offset 0): the unit's ranges are what addr2line makes of it, not its
/// line program's. Found by the `dwarf` fuzz target.
#[test]
fn root_range_attributes_are_taken_as_addr2line_takes_them() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/bin/app_rust_v0");
    let mut data = std::fs::read(&path).unwrap();
    let obj = object::File::parse(&*data).unwrap();
    let (start, size) = obj
        .section_by_name(".debug_abbrev")
        .and_then(|s| s.file_range())
        .unwrap();
    // DW_AT_addr_base, DW_FORM_sec_offset -> DW_AT_low_pc, DW_FORM_sec_offset.
    let at = data[start as usize..(start + size) as usize]
        .windows(2)
        .position(|w| w == [0x73, 0x17])
        .expect("an addr_base attribute")
        + start as usize;
    data[at] = 0x11;
    let patched = std::env::temp_dir().join(format!("symfilter-low-pc-{}", std::process::id()));
    std::fs::write(&patched, &data).unwrap();
    let seen = compare(&patched, &patched, None);
    std::fs::remove_file(&patched).unwrap();
    assert!(seen.asked > 100 && seen.frames > 10, "{seen:?}");
}

/// Large files: libc's debug file when installed, and any named by
/// `SYMFILTER_TEST_DWARF_FILE`.
#[test]
fn large_files_answer_as_addr2line_does() {
    let files: Vec<PathBuf> = std::env::var_os("SYMFILTER_TEST_DWARF_FILE")
        .into_iter()
        .map(PathBuf::from)
        .collect();
    let mut files: Vec<(PathBuf, PathBuf)> = files.into_iter().map(|f| (f.clone(), f)).collect();
    let libc = Path::new("/lib/x86_64-linux-gnu/libc.so.6");
    files.extend(libc_debug_file(libc).map(|debug| (debug, libc.to_owned())));
    for (debug, image) in &files {
        let seen = compare(debug, image, Some(10_000));
        assert!(seen.asked >= 9_000, "{}: {seen:?}", debug.display());
        assert!(seen.frames >= 9_000, "{}: {seen:?}", debug.display());
    }
}

/// libc's separate debug file in the system build-ID tree, if installed.
fn libc_debug_file(libc: &Path) -> Option<PathBuf> {
    let data = std::fs::read(libc).ok()?;
    let obj = object::File::parse(&*data).ok()?;
    let id = obj.build_id().ok()??;
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let path = Path::new(crate::elf::SYSTEM_DEBUG_DIR)
        .join(".build-id")
        .join(&hex[..2])
        .join(format!("{}.debug", &hex[2..]));
    path.exists().then_some(path)
}

/// DWARF 5 of one function, `outer` at 0x1000..0x1100, with a call of
/// `inner` inlined at 0x1010..0x1030 whose `DW_AT_call_line` is `line`
/// (its form is the value's), and a call of `leaf` inlined in it at
/// 0x1018..0x1020.
fn inlined_calls(line: gimli::write::AttributeValue) -> gimli::Dwarf<Reader<'static>> {
    use gimli::write::{Address, AttributeValue as V, DwarfUnit, EndianVec, Sections};
    let encoding = gimli::Encoding {
        format: gimli::Format::Dwarf32,
        version: 5,
        address_size: 8,
    };
    let mut dwarf = DwarfUnit::new(encoding);
    let root = dwarf.unit.root();
    let unit = &mut dwarf.unit;
    unit.get_mut(root)
        .set(gimli::DW_AT_low_pc, V::Address(Address::Constant(0x1000)));
    unit.get_mut(root)
        .set(gimli::DW_AT_high_pc, V::Udata(0x100));
    let mut abstract_function = |name: &str| {
        let id = unit.add(root, gimli::DW_TAG_subprogram);
        unit.get_mut(id)
            .set(gimli::DW_AT_name, V::String(name.into()));
        unit.get_mut(id)
            .set(gimli::DW_AT_inline, V::Inline(gimli::DW_INL_inlined));
        id
    };
    let inner = abstract_function("inner");
    let leaf = abstract_function("leaf");
    let outer = unit.add(root, gimli::DW_TAG_subprogram);
    unit.get_mut(outer)
        .set(gimli::DW_AT_name, V::String("outer".into()));
    unit.get_mut(outer)
        .set(gimli::DW_AT_low_pc, V::Address(Address::Constant(0x1000)));
    unit.get_mut(outer)
        .set(gimli::DW_AT_high_pc, V::Udata(0x100));
    let call = unit.add(outer, gimli::DW_TAG_inlined_subroutine);
    let entry = unit.get_mut(call);
    entry.set(gimli::DW_AT_abstract_origin, V::UnitRef(inner));
    entry.set(gimli::DW_AT_low_pc, V::Address(Address::Constant(0x1010)));
    entry.set(gimli::DW_AT_high_pc, V::Udata(0x20));
    entry.set(gimli::DW_AT_call_line, line);
    entry.set(gimli::DW_AT_call_column, V::Data1(3));
    let nested = unit.add(call, gimli::DW_TAG_inlined_subroutine);
    let entry = unit.get_mut(nested);
    entry.set(gimli::DW_AT_abstract_origin, V::UnitRef(leaf));
    entry.set(gimli::DW_AT_low_pc, V::Address(Address::Constant(0x1018)));
    entry.set(gimli::DW_AT_high_pc, V::Udata(0x8));
    entry.set(gimli::DW_AT_call_line, V::Udata(9));
    let mut sections = Sections::new(EndianVec::new(gimli::LittleEndian));
    dwarf.write(&mut sections).unwrap();
    let load = |id: gimli::SectionId| -> Result<Reader<'static>, gimli::Error> {
        let data = sections.get(id).map_or(Vec::new(), |s| s.slice().to_vec());
        Ok(gimli::EndianSlice::new(
            leak(data),
            gimli::RunTimeEndian::Little,
        ))
    };
    gimli::Dwarf::load(load).unwrap()
}

#[test]
fn inlined_calls_answer_as_addr2line_whatever_the_form_of_their_line() {
    use gimli::write::AttributeValue as V;
    let none = Beside(PathBuf::from("/nonexistent"));
    let frames = |line: V, addr: u64| {
        let index = DwarfIndex::new(inlined_calls(line.clone()), None);
        let ours = index.frames(addr, false, &none).unwrap();
        let ctx = addr2line::Context::from_dwarf(inlined_calls(line)).unwrap();
        assert_eq!(Ok(&ours), reference(&ctx, None, &none, addr).as_ref());
        ours
    };
    let names = |frames: &[Frame]| -> Vec<(String, u32, u32)> {
        let name = |f: &Frame| {
            f.function
                .as_ref()
                .map_or("??".into(), |n| n.raw().to_owned())
        };
        frames.iter().map(|f| (name(f), f.line, f.column)).collect()
    };
    // Every constant form; a negative constant is no line, as gimli reads
    // it.
    let expect =
        [("leaf", 0, 0), ("inner", 9, 0), ("outer", 7, 3)].map(|(n, l, c)| (n.to_owned(), l, c));
    for line in [V::Udata(7), V::Data2(7), V::ImplicitConst(7), V::Sdata(7)] {
        assert_eq!(names(&frames(line.clone(), 0x101c)), expect, "{line:?}");
    }
    let unknown = names(&frames(V::ImplicitConst(-1), 0x101c));
    assert_eq!(unknown[2], ("outer".to_owned(), 0, 3));
    // Outside the nested call, and outside both.
    assert_eq!(names(&frames(V::Udata(7), 0x1012)).len(), 2);
    assert_eq!(
        names(&frames(V::Sdata(7), 0x1040)),
        [("outer".to_owned(), 0, 0)]
    );
}

/// Units naming the same file share one name for it: here, one unit's
/// line table read twice over one module's names, then over another's.
#[test]
fn line_tables_share_the_names_of_their_files() {
    use super::lines::{Lines, Paths};
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/elf/bin/two_units");
    let dwarf = load(&path).unwrap();
    let header = dwarf.units().next().unwrap().unwrap();
    let unit = dwarf.unit(header).unwrap();
    let unit = gimli::UnitRef::new(&dwarf, &unit);
    let program = || unit.line_program.clone().unwrap();
    let (module, other) = (Paths::default(), Paths::default());
    let a = Lines::parse(unit, program(), &module).unwrap();
    let b = Lines::parse(unit, program(), &module).unwrap();
    let c = Lines::parse(unit, program(), &other).unwrap();
    let file = |lines: &Lines| lines.file(0).unwrap();
    assert!(file(&a).ends_with("src/units_a.c"), "{}", file(&a));
    assert!(Arc::ptr_eq(&file(&a), &file(&b)));
    assert!(!Arc::ptr_eq(&file(&a), &file(&c)));
    assert_eq!(file(&a), file(&c));
}

/// Where the debug info claims a unit by LLVM's reckoning: `.debug_aranges`
/// entries (clang's include globals), else the units' declared ranges
/// (code only). Addresses from each fixture's symbol table.
#[test]
fn units_are_claimed_where_llvm_finds_them() {
    let symbol = |path: &Path, name: &str| {
        let data = std::fs::read(path).unwrap();
        let obj = object::File::parse(&*data).unwrap();
        use object::{Object, ObjectSymbol};
        let s = obj.symbols().find(|s| s.name() == Ok(name)).unwrap();
        (s.address(), s.size())
    };
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/bin");
    for (name, data_claimed) in [("app_c_aranges", true), ("app_c_O2", false)] {
        let path = bin.join(name);
        let index = DwarfIndex::new(load(&path).unwrap(), None);
        let (main, size) = symbol(&path, "main");
        assert!(
            index.claims(main) && index.claims(main + size - 1),
            "{name}"
        );
        let (counter, size) = symbol(&path, "s_counter");
        assert_eq!(index.claims(counter), data_claimed, "{name}");
        assert_eq!(index.claims(counter + size - 1), data_claimed, "{name}");
        assert!(!index.claims(counter + size), "{name}");
        assert!(!index.claims(0x10), "{name}");
    }
}

/// The inlined calls of every function of `path`, read by the fast walk,
/// against gimli's reading; how many functions held inlined calls.
fn functions_read_alike(path: &Path) -> usize {
    let Some(dwarf) = load(path) else {
        return 0;
    };
    let index = DwarfIndex::new(dwarf, None);
    let mut inlining = 0;
    index.engine.parse_functions_both_ways(|at, fast, gimli| {
        assert_eq!(fast, gimli, "{} function at {at:#x}", path.display());
        if fast.is_ok_and(|f| !f.contains(" [] ")) {
            inlining += 1;
        }
    });
    inlining
}

#[test]
fn inlined_calls_are_read_by_the_fast_walk_as_by_gimli() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut files = Vec::new();
    fixtures(&root, &mut files);
    files.extend(std::env::var_os("SYMFILTER_TEST_DWARF_FILE").map(PathBuf::from));
    let libc = Path::new("/lib/x86_64-linux-gnu/libc.so.6");
    files.extend(libc_debug_file(libc));
    let inlining: usize = files.iter().map(|f| functions_read_alike(f)).sum();
    assert!(inlining > 100, "{inlining}");
}
