//! Fuzz DWARF lookups: a fixture binary whose debug sections and symbol
//! tables get the input's byte patches, looked up at addresses spread over
//! its code, through the whole ELF source (no panic, no hang, no unbounded
//! memory, whatever the DWARF and the symbols say) and through the DWARF
//! index alone, compared with addr2line: wherever both answer, the answers
//! are the same. The input's first byte picks the binary (C++ with DWARF 5
//! range lists, Rust with DWARF 4 ones, C with DWARF 4); the rest is 5-byte
//! patches: a little-endian offset into the concatenated `.debug_*` and
//! symbol table sections, and the byte to write there.
#![no_main]

use std::io::Write;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use object::{Object, ObjectSection, SectionKind};
use symfilter::dwarf::{DwarfIndex, LookupError, NoSplitFiles, Reader};
use symfilter::symbols::{CodeWant, DataWant, Frame, Name, SymbolSource, Text, lossy};

static BINARIES: [&[u8]; 3] = [
    include_bytes!("../../testdata/bin/app_cpp_O2"),
    include_bytes!("../../testdata/bin/app_rust_v0"),
    include_bytes!("../../testdata/bin/app_c_O2_dwarf4"),
];

struct Layout {
    /// File ranges of the debug sections and symbol tables.
    debug: Vec<(usize, usize)>,
    /// Addresses to look up.
    addrs: Vec<u64>,
}

fn layout(binary: usize) -> &'static Layout {
    static LAYOUTS: OnceLock<Vec<Layout>> = OnceLock::new();
    &LAYOUTS.get_or_init(|| BINARIES.iter().copied().map(layout_of).collect())[binary]
}

fn layout_of(binary: &[u8]) -> Layout {
    let obj = object::File::parse(binary).unwrap();
    let mut debug = Vec::new();
    let mut addrs = Vec::new();
    for s in obj.sections() {
        let name = s.name().unwrap_or("");
        let symbols = matches!(name, ".symtab" | ".strtab" | ".dynsym" | ".dynstr");
        if (name.starts_with(".debug_") || symbols)
            && let Some((start, len)) = s.file_range()
        {
            debug.push((start as usize, len as usize));
        }
        if s.kind() == SectionKind::Text {
            addrs.extend((s.address()..s.address() + s.size()).step_by(37));
        }
    }
    Layout { debug, addrs }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, data)) = data.split_first() else {
        return;
    };
    let binary = usize::from(pick) % BINARIES.len();
    let layout = layout(binary);
    let total: usize = layout.debug.iter().map(|d| d.1).sum();
    if total == 0 {
        return;
    }
    let mut bytes = BINARIES[binary].to_vec();
    for patch in data.chunks_exact(5) {
        let mut at = u32::from_le_bytes([patch[0], patch[1], patch[2], patch[3]]) as usize % total;
        for &(start, len) in &layout.debug {
            if at < len {
                bytes[start + at] = patch[4];
                break;
            }
            at -= len;
        }
    }
    compare(&bytes, &layout.addrs);
    let path = std::env::temp_dir().join(format!("symfilter-fuzz-dwarf-{}", std::process::id()));
    let mut file = std::fs::File::create(&path).unwrap();
    file.write_all(&bytes).unwrap();
    drop(file);
    if let Ok(source) = symfilter::elf::open_file(&path, &[]) {
        for &addr in &layout.addrs {
            let _ = source.lookup_code(addr, CodeWant::default());
        }
        for declaration in [false, true] {
            let _ = source.lookup_data(layout.addrs[0], DataWant { declaration });
        }
    }
    let _ = std::fs::remove_file(&path);
});

/// The DWARF index against addr2line on the same sections.
fn compare(bytes: &[u8], addrs: &[u64]) {
    let Ok(obj) = object::File::parse(bytes) else {
        return;
    };
    let load = |id: gimli::SectionId| -> Result<Reader<'_>, gimli::Error> {
        let data = obj
            .section_by_name(id.name())
            .and_then(|s| s.data().ok())
            .unwrap_or(&[]);
        Ok(gimli::EndianSlice::new(data, gimli::RunTimeEndian::Little))
    };
    let (Ok(ours), Ok(theirs)) = (gimli::Dwarf::load(load), gimli::Dwarf::load(load)) else {
        return;
    };
    let index = DwarfIndex::new(ours, None);
    let Ok(ctx) = addr2line::Context::from_dwarf(theirs) else {
        return;
    };
    for &addr in addrs {
        let ours = index.frames(addr, false, &NoSplitFiles);
        // addr2line recurses once per nesting level: not asked where the
        // index refuses the depth.
        if ours == Err(LookupError::TooDeep) {
            continue;
        }
        let Ok(ours) = ours else { continue };
        if let Some(theirs) = reference(&ctx, addr) {
            assert_eq!(ours[..], theirs[..], "at {addr:#x}");
        }
    }
}

/// addr2line's frames, `None` on an error.
fn reference(ctx: &addr2line::Context<Reader<'_>>, addr: u64) -> Option<Vec<Frame>> {
    let mut iter = ctx.find_frames(addr).skip_all_loads().ok()?;
    let mut frames = Vec::new();
    while let Some(f) = iter.next().ok()? {
        frames.push(Frame {
            function: f
                .function
                .as_ref()
                .map(|n| Name::from(lossy(n.name.slice()).to_string())),
            file: f.location.as_ref().and_then(|l| l.file).map(Text::from),
            line: f.location.as_ref().and_then(|l| l.line).unwrap_or(0),
            column: f.location.as_ref().and_then(|l| l.column).unwrap_or(0),
        });
    }
    Some(frames)
}
