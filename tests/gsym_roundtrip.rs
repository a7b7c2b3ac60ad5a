//! Writer -> reader round trips on random functions: every version, byte
//! order and address offset size gives the answers a simple model gives.

use proptest::prelude::*;
use symfilter::gsym::parser::{GsymView, Layout};
use symfilter::gsym::types::{Endian, VERSION_1, VERSION_2};
use symfilter::gsym_create::writer::{
    EncodeOptions, FunctionInfo, GsymBuilder, InlineNode, LineEntry,
};

#[derive(Clone, Debug)]
struct Func {
    gap: u64,
    size: u64,
    /// (offset into the function, file 1..=3, line)
    lines: Vec<(u64, u32, u32)>,
    /// Inlined callee over [start + a, start + a + len), called at this line.
    inline: Option<(u64, u64, u32)>,
}

fn func() -> impl Strategy<Value = Func> {
    (1u64..600, 0u64..80).prop_flat_map(|(size, gap)| {
        (
            Just(size),
            Just(gap),
            prop::collection::vec((0..size, 1u32..=3, 1u32..5000), 0..12),
            prop::option::of((0..size, 1u64..64, 1u32..900)),
        )
            .prop_map(|(size, gap, mut lines, inline)| {
                lines.sort_by_key(|l| l.0);
                lines.dedup_by_key(|l| l.0);
                if let Some(first) = lines.first_mut() {
                    first.0 = 0;
                }
                let inline = inline.map(|(a, len, l)| (a, len.min(size - a), l));
                Func {
                    gap,
                    size,
                    lines,
                    inline,
                }
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn every_encoding_answers_like_the_model(funcs in prop::collection::vec(func(), 1..30), base in 0u64..0x1_0000_0000) {
        let mut b = GsymBuilder::new();
        let files: Vec<u32> = (1..=3).map(|i| b.insert_file(&format!("/src/d{i}/f{i}.c"))).collect();
        let callee = b.insert_string(b"callee");
        let mut addr = base;
        let mut model = Vec::new();
        for (i, f) in funcs.iter().enumerate() {
            addr += f.gap;
            let start = addr;
            let name = b.insert_string(format!("fn{i}").as_bytes());
            let lines: Vec<LineEntry> = f
                .lines
                .iter()
                .map(|&(o, file, line)| LineEntry { addr: start + o, file: files[file as usize - 1], line })
                .collect();
            let inline = f.inline.map(|(a, len, call_line)| InlineNode {
                ranges: vec![(start, start + f.size)],
                name,
                children: vec![InlineNode {
                    ranges: vec![(start + a, start + a + len)],
                    name: callee,
                    call_file: files[0],
                    call_line,
                    children: vec![],
                }],
                ..InlineNode::default()
            });
            b.add_function(FunctionInfo {
                start,
                end: start + f.size,
                name,
                lines: (!lines.is_empty()).then_some(lines),
                inline: if f.lines.is_empty() { None } else { inline },
            });
            model.push((start, f.clone()));
            addr += f.size;
        }
        b.finalize();
        let mut outputs = Vec::new();
        for version in [VERSION_1, VERSION_2] {
            for endian in [Endian::Little, Endian::Big] {
                for aos in [None, Some(8u8)] {
                    let bytes = b.encode(&EncodeOptions { version, endian, addr_off_size: aos }).unwrap();
                    let layout = Layout::parse(&bytes).unwrap();
                    prop_assert_eq!(layout.version, version);
                    prop_assert_eq!(layout.endian, endian);
                    let view = GsymView::new(&bytes, &layout);
                    let mut answers = Vec::new();
                    for (i, (start, f)) in model.iter().enumerate() {
                        for a in [*start, start + f.size / 2, start + f.size - 1, start + f.size] {
                            let r = view.lookup(a);
                            if a < start + f.size {
                                let r = r.clone().unwrap();
                                prop_assert_eq!(&r.func_name, &format!("fn{i}"));
                                prop_assert_eq!(r.func_start, *start);
                                let o = a - start;
                                if let Some(&(_, file, line)) = f.lines.iter().rev().find(|l| l.0 <= o) {
                                    let inl = f.inline.filter(|&(ia, len, _)| ia <= o && o < ia + len);
                                    let outer = r.locations.last().unwrap();
                                    prop_assert_eq!(&outer.name, &format!("fn{i}"));
                                    if let Some((_, _, call_line)) = inl {
                                        prop_assert_eq!(r.locations.len(), 2);
                                        prop_assert_eq!(&r.locations[0].name, "callee");
                                        prop_assert_eq!(r.locations[0].line, line);
                                        prop_assert_eq!(outer.line, call_line);
                                        prop_assert_eq!(&outer.base, "f1.c");
                                    } else {
                                        prop_assert_eq!(r.locations.len(), 1);
                                        prop_assert_eq!(outer.line, line);
                                        prop_assert_eq!(&outer.base, &format!("f{file}.c"));
                                    }
                                } else {
                                    prop_assert_eq!(r.locations.len(), 1);
                                    prop_assert_eq!(r.locations[0].line, 0);
                                }
                            }
                            answers.push(r);
                        }
                    }
                    outputs.push(answers);
                }
            }
        }
        for o in &outputs[1..] {
            prop_assert_eq!(o, &outputs[0]);
        }
    }
}
