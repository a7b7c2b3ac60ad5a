//! GSYM functions from a Breakpad `.sym` file.

use std::collections::HashMap;

use super::writer::{FunctionInfo, GsymBuilder, InlineNode, LineEntry, insert_range};
use super::{ConvertError, ConvertStats};
use crate::breakpad::parser::{OriginForm, Record, Records};
use crate::breakpad::types::{NO_FILE, Span, build_id_prefix};
use crate::symbols::BuildId;

/// One Breakpad `INLINE` record.
struct InlineRec {
    level: u32,
    call_line: u32,
    /// The call site's file; `None` in the old form, which does not name
    /// it (see [`old_form_call_file`]).
    call_file: Option<u32>,
    name: u64,
    /// The file of the inlined function itself (old `INLINE_ORIGIN` form
    /// only): the call file of the records nested in this one.
    origin_file: u32,
    ranges: Vec<(u64, u64)>,
}

/// The file of a FUNC's own code, where its old-form depth-0 `INLINE`
/// records were called from, as the Breakpad resolver finds it
/// (`breakpad::resolver`): of its line records, sorted by address, without
/// empty and overlapping ones, the first of the first 16 that no inline
/// range covers (looking at 256 ranges at most), else the first.
///
/// `lines` are the FUNC's line records as read, `sizes` their sizes.
fn old_form_call_file(lines: &[LineEntry], sizes: &[u64], recs: &[InlineRec]) -> u32 {
    // (address, size, file)
    let mut sorted: Vec<(u64, u64, u32)> = lines
        .iter()
        .zip(sizes)
        .map(|(l, &size)| (l.addr, size, l.file))
        .collect();
    sorted.sort_by_key(|l| l.0);
    let mut kept: Vec<(u64, u64, u32)> = Vec::new();
    let mut kept_end = 0u64;
    for l in sorted {
        if l.1 == 0 || (!kept.is_empty() && l.0 < kept_end) {
            continue;
        }
        kept_end = l.0.saturating_add(l.1);
        kept.push(l);
    }
    let ranges = recs.iter().flat_map(|r| r.ranges.iter());
    let own = kept
        .iter()
        .take(16)
        .find(|l| !ranges.clone().take(256).any(|&(s, e)| s <= l.0 && l.0 < e));
    own.or(kept.first()).map_or(0, |l| l.2)
}

/// Deepest Breakpad inline nesting level kept.
const MAX_BREAKPAD_INLINE_LEVEL: u32 = 256;

/// Builds a function's inline tree from its `INLINE` records: each range
/// hangs under the most recent node one level up that contains it.
///
/// An old-form record (no call-site file) was called from its parent's
/// body: the parent's own file (old `INLINE_ORIGIN` form), or `own_file`
/// for the function itself.
fn breakpad_inline_tree(f: &FunctionInfo, recs: &[InlineRec], own_file: u32) -> Option<InlineNode> {
    if recs.is_empty() || f.start >= f.end {
        return None;
    }
    // Flat nodes: (level, node, parent, file of the node's own code).
    // Index 0 is the function itself.
    let mut nodes: Vec<(i64, InlineNode, usize, u32)> = vec![(
        -1,
        InlineNode {
            ranges: vec![(f.start, f.end)],
            name: f.name,
            ..InlineNode::default()
        },
        0,
        own_file,
    )];
    // Parents first: a range may belong to a parent listed after it.
    let mut order: Vec<&InlineRec> = recs.iter().collect();
    order.sort_by_key(|r| r.level);
    for r in order {
        let mut by_parent: Vec<(usize, Vec<(u64, u64)>)> = Vec::new();
        for &(s, e) in &r.ranges {
            let want = i64::from(r.level) - 1;
            let parent = nodes
                .iter()
                .rposition(|(l, n, _, _)| *l == want && n.contains_range(s, e))
                .or_else(|| nodes.iter().rposition(|(l, _, _, _)| *l == want))
                .unwrap_or(0);
            match by_parent.iter_mut().find(|(p, _)| *p == parent) {
                Some((_, v)) => insert_range(v, s, e),
                None => {
                    let mut v = Vec::new();
                    insert_range(&mut v, s, e);
                    by_parent.push((parent, v));
                }
            }
        }
        // An empty range list would read back as the end of the siblings.
        for (parent, ranges) in by_parent.into_iter().filter(|(_, r)| !r.is_empty()) {
            let call_file = r
                .call_file
                .unwrap_or_else(|| nodes.get(parent).map_or(0, |n| n.3));
            nodes.push((
                i64::from(r.level),
                InlineNode {
                    ranges,
                    name: r.name,
                    call_file,
                    call_line: r.call_line,
                    children: Vec::new(),
                },
                parent,
                r.origin_file,
            ));
        }
    }
    // Attach children to parents, deepest first so each parent receives
    // its complete subtree (children always come after their parent);
    // siblings end up in address order.
    let mut slots: Vec<Option<InlineNode>> =
        nodes.iter().map(|(_, n, _, _)| Some(n.clone())).collect();
    for i in (1..nodes.len()).rev() {
        let parent = nodes[i].2;
        if let Some(mut child) = slots[i].take()
            && let Some(Some(p)) = slots.get_mut(parent)
        {
            child
                .children
                .sort_by_key(|c| c.ranges.first().map_or(0, |r| r.0));
            p.children.push(child);
        }
    }
    let mut root = slots.into_iter().next().flatten()?;
    root.children
        .sort_by_key(|c| c.ranges.first().map_or(0, |r| r.0));
    (!root.children.is_empty()).then_some(root)
}

/// Fills `b` from a Breakpad `.sym` file: FUNC records with their line
/// and INLINE records, and PUBLIC records. The UUID is the code ID (the
/// full build ID) when present, else the debug ID turned back into the
/// build ID's first 16 bytes.
///
/// The records are read by the store's reader ([`Records`]), in both forms
/// dump_syms has written for inlining: the older
/// `INLINE_ORIGIN <id> <file> <name>` and `INLINE` without the call-site
/// file, whose call file is then found as the Breakpad resolver finds it;
/// an old-form file gives the GSYM of its current-form original. Where the
/// store skips a corrupt line, a conversion refuses the file naming the
/// line; it keeps every record, and adds names and files to the GSYM
/// string and file tables in file order (which fixes the output bytes).
///
/// Breakpad addresses are relative to the module's lowest load address;
/// `image_base` (the first `PT_LOAD`'s `p_vaddr`, 0 for PIE and shared
/// objects) is added to give the ELF virtual addresses lookups use.
pub fn from_breakpad(
    text: &[u8],
    image_base: u64,
    b: &mut GsymBuilder,
) -> Result<ConvertStats, ConvertError> {
    let form = OriginForm::of_file(text);
    let mut records = Records::new(text)?;
    let lossy = |span: Span| String::from_utf8_lossy(span.bytes(text));
    let mut files: HashMap<u32, u32> = HashMap::new();
    // Name, and the file of the inlined function (old form; a FILE number).
    let mut origins: HashMap<u32, (u64, u32)> = HashMap::new();
    // Each FUNC with its INLINE records and the sizes of its line records.
    let mut funcs: Vec<(FunctionInfo, Vec<InlineRec>, Vec<u64>)> = Vec::new();
    let mut publics: Vec<(u64, u64)> = Vec::new();
    let uuid = build_id_prefix(records.module().debug_id.bytes(text));
    let mut code_id: Option<Vec<u8>> = None;
    let mut stats = ConvertStats::default();
    while let Some((line, record)) = records.next() {
        let record = record.map_err(|reason| ConvertError::Breakpad { line, reason })?;
        match record {
            Record::CodeId(id) => code_id = BuildId::from_hex(&lossy(id)).map(|b| b.0),
            Record::File { id, path } => {
                let idx = b.insert_file(&lossy(path));
                files.insert(id, idx);
            }
            Record::InlineOrigin(rec) => {
                let origin = rec.origin(form);
                let name = b.insert_string(lossy(origin.name).as_bytes());
                origins.insert(origin.id, (name, origin.file));
            }
            Record::Func {
                address,
                size,
                name,
            } => {
                let start = address.wrapping_add(image_base);
                let f = FunctionInfo {
                    start,
                    end: start.saturating_add(size),
                    name: b.insert_string(lossy(name).as_bytes()),
                    lines: None,
                    inline: None,
                };
                funcs.push((f, Vec::new(), Vec::new()));
            }
            Record::Inline(rec) => {
                if rec.depth > MAX_BREAKPAD_INLINE_LEVEL {
                    continue;
                }
                let ranges = records
                    .inline_ranges()
                    .get(rec.first_range as usize..rec.end_range as usize)
                    .unwrap_or_default()
                    .iter()
                    .map(|&(a, n)| {
                        let a = a.wrapping_add(image_base);
                        (a, a.saturating_add(n))
                    })
                    .collect();
                if let Some((_, recs, _)) = funcs.last_mut() {
                    let file = |n: u32| match n {
                        NO_FILE => 0,
                        n => files.get(&n).copied().unwrap_or(0),
                    };
                    let (name, origin_file) =
                        origins.get(&rec.origin).copied().unwrap_or((0, NO_FILE));
                    recs.push(InlineRec {
                        level: rec.depth,
                        call_line: rec.call_line,
                        call_file: rec.has_call_file.then(|| file(rec.call_file)),
                        name,
                        origin_file: file(origin_file),
                        ranges,
                    });
                }
            }
            Record::Public(p) => {
                let name = b.insert_string(lossy(p.name).as_bytes());
                publics.push((p.address.wrapping_add(image_base), name));
            }
            Record::Line(l) => {
                if let Some((f, _, sizes)) = funcs.last_mut() {
                    // Breakpad answers with the line and no file name.
                    let file = match files.get(&l.file) {
                        Some(&f) => f,
                        None => b.unnamed_file(),
                    };
                    sizes.push(l.size);
                    f.lines.get_or_insert_with(Vec::new).push(LineEntry {
                        addr: l.address.wrapping_add(image_base),
                        file,
                        line: l.line,
                    });
                }
            }
            Record::Other => {}
        }
    }
    if let Some(id) = code_id.or(uuid) {
        b.set_uuid(&id);
    }
    let funcs_ranges: Vec<(u64, u64)> = funcs.iter().map(|(f, ..)| (f.start, f.end)).collect();
    for (mut f, recs, sizes) in funcs {
        // Before the lines are cut to the function and merged.
        let own_file = if recs.iter().any(|r| r.call_file.is_none()) {
            old_form_call_file(f.lines.as_deref().unwrap_or_default(), &sizes, &recs)
        } else {
            0
        };
        if let Some(lines) = f.lines.as_mut() {
            lines.sort_by_key(|l| l.addr);
            lines.retain(|l| f.start <= l.addr && l.addr < f.end);
            lines.dedup_by(|b, a| a.file == b.file && a.line == b.line);
            if lines.is_empty() {
                f.lines = None;
            }
        }
        f.inline = breakpad_inline_tree(&f, &recs, own_file);
        b.add_function(f);
        stats.from_debug_info += 1;
    }
    // Breakpad takes a PUBLIC only where no FUNC covers the address.
    let mut covered: Vec<(u64, u64)> = funcs_ranges;
    covered.sort_unstable();
    let mut reach = 0;
    for r in &mut covered {
        reach = reach.max(r.1);
        r.1 = reach;
    }
    let in_func = |a: u64| {
        let i = covered.partition_point(|r| r.0 <= a);
        i > 0 && a < covered[i - 1].1
    };
    for (addr, name) in publics {
        if in_func(addr) {
            continue;
        }
        b.add_function(FunctionInfo {
            start: addr,
            end: addr,
            name,
            lines: None,
            inline: None,
        });
        stats.from_symbols += 1;
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gsym::parser::{GsymView, Layout};

    use crate::gsym_create::writer::EncodeOptions;

    const SYM: &str = "MODULE Linux x86_64 0A0162BCF65D8ACC5BE5FE9C025165F60 t\n\
        INFO CODE_ID BC62010A5DF6CC8A5BE5FE9C025165F67F1BDDD6\n\
        FILE 0 /src/a.c\n\
        FILE 1 /src/b.h\n\
        INLINE_ORIGIN 0 inner\n\
        INLINE_ORIGIN 1 empty\n\
        FUNC 1000 40 0 outer_fn\n\
        INLINE 0 7 0 1 1008 0\n\
        INLINE 0 9 0 0 1010 10\n\
        1000 10 5 0\n\
        1010 10 20 1\n\
        1020 20 10 0\n\
        PUBLIC 2000 0 after\n";

    fn lookup(addr: u64) -> Vec<(String, String, u32)> {
        lookup_in(SYM, addr)
    }

    fn convert(sym: &str) -> Vec<u8> {
        let mut b = GsymBuilder::new();
        from_breakpad(sym.as_bytes(), 0x40_0000, &mut b).unwrap();
        b.finalize();
        b.encode(&EncodeOptions::default()).unwrap()
    }

    fn lookup_in(sym: &str, addr: u64) -> Vec<(String, String, u32)> {
        let bytes = convert(sym);
        let layout = Layout::parse(&bytes).unwrap();
        assert_eq!(
            GsymView::new(&bytes, &layout).uuid(),
            BuildId::from_hex("bc62010a5df6cc8a5be5fe9c025165f67f1bddd6")
                .unwrap()
                .0
        );
        let r = GsymView::new(&bytes, &layout).lookup(addr).unwrap();
        r.locations
            .into_iter()
            .map(|l| (l.name.clone(), l.path().unwrap_or_default(), l.line))
            .collect()
    }

    #[test]
    fn breakpad_records_become_functions_lines_and_inlines() {
        let s = |n: &str, f: &str, l| (n.to_string(), f.to_string(), l);
        assert_eq!(lookup(0x40_1004), vec![s("outer_fn", "/src/a.c", 5)]);
        // The zero-size INLINE is dropped; its sibling still works.
        assert_eq!(
            lookup(0x40_1014),
            vec![s("inner", "/src/b.h", 20), s("outer_fn", "/src/a.c", 9)]
        );
        assert_eq!(lookup(0x40_1030), vec![s("outer_fn", "/src/a.c", 10)]);
        assert_eq!(lookup(0x40_2004)[0].0, "after");
    }

    #[test]
    fn breakpad_errors_name_the_line() {
        let mut b = GsymBuilder::new();
        let e =
            from_breakpad(b"MODULE Linux x86_64 00 t\nFUNC zz 10 0 f\n", 0, &mut b).unwrap_err();
        assert_eq!(e.to_string(), "line 2: bad FUNC address");
    }

    /// [`SYM`] in the old record forms, with a nested inline record: the
    /// call file of a depth-0 record is the function's own (the first line
    /// record no inline range covers), that of a deeper one the file its
    /// parent's origin names.
    const NESTED: &str = "MODULE Linux x86_64 0A0162BCF65D8ACC5BE5FE9C025165F60 t\n\
        INFO CODE_ID BC62010A5DF6CC8A5BE5FE9C025165F67F1BDDD6\n\
        FILE 0 /src/a.c\n\
        FILE 1 /src/b.h\n\
        FILE 2 /src/c.h\n\
        INLINE_ORIGIN 0 inner\n\
        INLINE_ORIGIN 1 deeper\n\
        FUNC 1000 40 0 outer_fn\n\
        INLINE 0 9 0 0 1010 10\n\
        INLINE 1 4 1 1 1014 4\n\
        1010 4 20 1\n\
        1014 4 30 2\n\
        1018 8 21 1\n\
        1000 10 5 0\n\
        1020 20 10 0\n";

    const NESTED_OLD: &str = "MODULE Linux x86_64 0A0162BCF65D8ACC5BE5FE9C025165F60 t\n\
        INFO CODE_ID BC62010A5DF6CC8A5BE5FE9C025165F67F1BDDD6\n\
        FILE 0 /src/a.c\n\
        FILE 1 /src/b.h\n\
        FILE 2 /src/c.h\n\
        INLINE_ORIGIN 0 1 inner\n\
        INLINE_ORIGIN 1 2 deeper\n\
        FUNC 1000 40 0 outer_fn\n\
        INLINE 0 9 0 1010 10\n\
        INLINE 1 4 1 1014 4\n\
        1010 4 20 1\n\
        1014 4 30 2\n\
        1018 8 21 1\n\
        1000 10 5 0\n\
        1020 20 10 0\n";

    #[test]
    fn old_record_forms_give_the_current_forms_gsym() {
        let s = |n: &str, f: &str, l| (n.to_string(), f.to_string(), l);
        assert_eq!(
            lookup_in(NESTED_OLD, 0x40_1015),
            vec![
                s("deeper", "/src/c.h", 30),
                s("inner", "/src/b.h", 4),
                s("outer_fn", "/src/a.c", 9)
            ]
        );
        assert!(convert(NESTED_OLD) == convert(NESTED));
        // Only the INLINE records in the old form, or only the origins.
        let half = NESTED.replace("INLINE 0 9 0 0 ", "INLINE 0 9 0 ");
        assert!(convert(&half) == convert(NESTED));
        let half = NESTED_OLD.replace("INLINE 0 9 0 ", "INLINE 0 9 0 0 ");
        assert!(convert(&half) == convert(NESTED));
    }

    #[test]
    fn origin_form_is_decided_for_the_whole_file() {
        // Current form, one name that starts with a number and a space:
        // the name stays whole.
        let sym = SYM.replace("INLINE_ORIGIN 0 inner", "INLINE_ORIGIN 0 2 inner");
        assert_eq!(lookup_in(&sym, 0x40_1014)[0].0, "2 inner");
        // Old form (two of three), one origin without a file number: its
        // name stays whole.
        let sym = NESTED_OLD.replace(
            "INLINE_ORIGIN 1 2 deeper\n",
            "INLINE_ORIGIN 1 deeper\nINLINE_ORIGIN 2 0 unused\n",
        );
        let frames = lookup_in(&sym, 0x40_1015);
        assert_eq!(frames[0].0, "deeper", "{frames:?}");
        assert_eq!(frames.len(), 3);
        // A tie is the current form: `1 inner` is then a name, the origins
        // name no files, and GSYM lookups skip call sites without a file
        // (as LLVM's do).
        let sym = NESTED_OLD.replace("INLINE_ORIGIN 1 2 deeper", "INLINE_ORIGIN 1 deeper");
        let frames = lookup_in(&sym, 0x40_1015);
        assert_eq!(frames[0].0, "1 inner", "{frames:?}");
        // `-1` names no file, as an unknown file number does.
        let none = NESTED_OLD.replace("INLINE_ORIGIN 0 1 inner", "INLINE_ORIGIN 0 -1 inner");
        let unknown = NESTED_OLD.replace("INLINE_ORIGIN 0 1 inner", "INLINE_ORIGIN 0 7 inner");
        assert!(convert(&none) == convert(&unknown));
        assert!(convert(&none) != convert(NESTED_OLD));
    }

    #[test]
    fn short_inline_records_are_refused() {
        // (`INLINE 0 9 0 0 1010`, a current-form record without its last
        // size, reads as an old-form one, as in Breakpad's processor.)
        for (rec, reason) in [
            ("INLINE 0 9 0 1010", "INLINE record without ranges"),
            ("INLINE 0 9 0", "INLINE record without ranges"),
            ("INLINE 0 9", "bad INLINE call file"),
        ] {
            let sym = NESTED.replace("INLINE 0 9 0 0 1010 10", rec);
            let mut b = GsymBuilder::new();
            let e = from_breakpad(sym.as_bytes(), 0, &mut b).unwrap_err();
            assert_eq!(e.to_string(), format!("line 9: {reason}"), "{rec}");
        }
    }

    /// A conversion refuses a file at the first line the store skips as
    /// corrupt, for the store's reason.
    #[test]
    fn refuses_what_the_store_skips() {
        for (from, to) in [
            ("FUNC 1000 40 0 outer_fn", "FUNC 1000 40 0"),
            ("FILE 2 /src/c.h", "FILE two /src/c.h"),
            ("1014 4 30 2", "1014 4 30 2 9"),
            ("INLINE 1 4 1 1 1014 4", "INLINE 1 4 1 1 1014 zz"),
            ("INLINE_ORIGIN 1 deeper", "INLINE_ORIGIN x deeper"),
            ("1020 20 10 0", "1020 20 10 0\nPUBLIC 2000 0 p\n2000 4 1 0"),
        ] {
            let sym = NESTED.replace(from, to);
            assert_ne!(sym, NESTED);
            let store = crate::breakpad::parser::parse(sym.as_bytes()).unwrap();
            let c = store.corruption;
            assert!(c.count > 0, "{to}");
            let mut b = GsymBuilder::new();
            let e = from_breakpad(sym.as_bytes(), 0, &mut b).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("line {}: {}", c.first_line, c.first_reason)
            );
        }
    }

    proptest::proptest! {
        /// Hostile mixtures of the record forms: never a panic, and what
        /// converts encodes and reads back.
        #[test]
        fn mixed_record_forms_never_panic(
            recs in proptest::collection::vec(
                (0u64..4, 0u64..300, proptest::option::of(0u64..5), 0u64..4,
                 proptest::collection::vec((0x0fe0u64..0x1060, 0u64..0x40), 1..4)),
                0..12),
            origins in proptest::collection::vec((0u64..4, proptest::option::of(-1i64..5)), 0..6),
            lines in proptest::collection::vec((0x0ff0u64..0x1050, 0u64..0x20, 0u32..50, 0u64..5), 0..20),
        ) {
            let mut sym = String::from(
                "MODULE Linux x86_64 0A0162BCF65D8ACC5BE5FE9C025165F60 t\n\
                 FILE 0 /src/a.c\nFILE 1 /src/b.h\nFILE 2 /src/c.h\n",
            );
            for (id, file) in &origins {
                match file {
                    Some(f) => sym.push_str(&format!("INLINE_ORIGIN {id} {f} o{id}\n")),
                    None => sym.push_str(&format!("INLINE_ORIGIN {id} o{id}\n")),
                }
            }
            sym.push_str("FUNC 1000 40 0 f\n");
            for (level, line, file, origin, ranges) in &recs {
                let mut r = format!("INLINE {level} {line} ");
                if let Some(file) = file {
                    r.push_str(&format!("{file} "));
                }
                r.push_str(&origin.to_string());
                for (a, n) in ranges {
                    r.push_str(&format!(" {a:x} {n:x}"));
                }
                sym.push_str(&r);
                sym.push('\n');
            }
            for (a, n, l, f) in &lines {
                sym.push_str(&format!("{a:x} {n:x} {l} {f}\n"));
            }
            let mut b = GsymBuilder::new();
            if from_breakpad(sym.as_bytes(), 0, &mut b).is_ok() {
                b.finalize();
                let bytes = b.encode(&EncodeOptions::default());
                proptest::prop_assert!(bytes.is_ok());
                let bytes = bytes.unwrap_or_default();
                let layout = Layout::parse(&bytes);
                proptest::prop_assert!(layout.is_ok());
                if let Ok(layout) = layout {
                    for a in (0xfe0..0x1060).step_by(3) {
                        let _ = GsymView::new(&bytes, &layout).lookup(a);
                    }
                }
            }
        }
    }
}
