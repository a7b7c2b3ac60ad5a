//! Fuzz the lexer, the typed field parsers, the context state machine and
//! every renderer: arbitrary bytes through `Filter::run`, split into reads of
//! a size chosen by the first byte, with small line and group limits so the
//! over-long-line and hexdict paths are reached. A scripted symbol source
//! answers for one build ID (52083ec89bc0c7c102ccde8f63e3d8150be019b5, any
//! module name), so markup and crash-report frames (see `symfilter::crash`)
//! naming it resolve and their rewriting is reached without file I/O. Each
//! format runs again with `--demux` (the preset chosen by the first byte, at
//! most 4 processes so that evictions happen); then text without markup
//! must come out unchanged in the human format. In JSON, every line shown
//! as text alone must give back the input line of its number. Each run is
//! made again on two threads (`symfilter::pipeline`, every lookup left to
//! the printing thread), which must print the same bytes.
#![no_main]

use std::io::{self, Read, Write};

use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, Mutex};
use symfilter::filter::{DemuxOptions, Dialect, Filter, Options};
use symfilter::render::Format;
use symfilter::report::Silent;
use symfilter::symbols::{
    Attempt, CodeInfo, CodeWant, DataInfo, DataWant, Frame, Locator, Miss, ModuleKey, Provider,
    SymbolHit, SymbolSource, Symbolizer, SymbolizerConfig,
};

/// The build ID the scripted source answers for.
const KNOWN: &str = "52083ec89bc0c7c102ccde8f63e3d8150be019b5";

struct Scripted;

impl Provider for Scripted {
    fn name(&self) -> Locator {
        Locator::Custom("scripted")
    }
    fn find(&self, key: &ModuleKey, _: &mut Vec<Attempt>) -> Option<Box<dyn SymbolSource>> {
        (key.build_id.to_hex() == KNOWN).then(|| Box::new(Answers) as Box<dyn SymbolSource>)
    }
}

/// Every address below 0x10000 is code: an inlined frame in a project file
/// and its caller in a toolchain file; above it, data.
struct Answers;

impl SymbolSource for Answers {
    fn origin(&self) -> String {
        "scripted".into()
    }
    fn lookup_code(&self, addr: u64, _: CodeWant) -> Result<CodeInfo, Miss> {
        if addr >= 0x10000 {
            return Err(Miss::NoInfo);
        }
        let frame = |f: &str, file: &str| Frame {
            function: Some(f.into()),
            file: Some(file.into()),
            line: (addr % 97) as u32,
            column: (addr % 13) as u32,
        };
        Ok(CodeInfo {
            frames: vec![
                frame("_ZN5inner4stepEv", "/home/u/proj/src/inner.cc"),
                frame("main", "/rustc/0123456789abcdef/library/core/src/ops.rs"),
            ]
            .into(),
            symbol: Some(SymbolHit {
                name: "main".into(),
                address: addr & !0xff,
                size: 0x100,
                file: None,
            }),
            claimed: false,
            shown: Default::default(),
        })
    }
    fn lookup_data(&self, _: u64, _: DataWant) -> Result<DataInfo, Miss> {
        Err(Miss::NoInfo)
    }
}

fn symbolizer() -> Symbolizer {
    Symbolizer::new(SymbolizerConfig {
        providers: vec![Box::new(Scripted)],
    })
}

struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, input)) = data.split_first() else {
        return;
    };
    let step = usize::from(first % 64) + 1;
    let how =
        ["auto", "syslog", "journald", "logcat", "bracket", "fuchsia"][usize::from(first) % 6];
    let plain = markup_free(input);
    let runs = [Format::Human, Format::Llvm, Format::Json]
        .into_iter()
        .enumerate()
        .flat_map(|(i, f)| [(i, f, false), (i, f, true)]);
    for (i, format, demux) in runs {
        let opts = Options {
            demux: demux.then(|| DemuxOptions {
                how: how.parse().expect("preset"),
                max_keys: 4,
            }),
            format,
            dialect: Dialect::usual_for(format),
            color: first & 0x80 != 0,
            keep_context: first & 0x40 != 0,
            max_line: if i == 0 { 256 } else { 1 << 16 },
            max_group_lines: 16,
            max_group_bytes: 1024,
            ..Options::default()
        };
        let mut filter = Filter::new(opts.clone(), symbolizer(), Arc::new(Silent));
        let mut out = Vec::new();
        let _ = filter.run("<fuzz>", Trickle { data: input, step }, &mut out);
        let _ = filter.finish(&mut out);
        assert!(
            two_threads(opts, input, step) == out,
            "two threads printed otherwise"
        );
        if demux && format == Format::Human && plain {
            assert_eq!(
                out, input,
                "text without markup changed under --demux={how}"
            );
        }
        if !demux && format == Format::Json {
            check_text_lines(&out, input);
        }
    }
});

/// What the filter prints on two threads, every lookup it may leave to
/// the printing thread left to it.
fn two_threads(opts: Options, input: &[u8], step: usize) -> Vec<u8> {
    let printed = Shared::default();
    let to = printed.clone();
    let pipeline = symfilter::pipeline::Pipeline::start(
        move || Box::new(to) as Box<dyn Write>,
        Arc::new(Silent),
    )
    .expect("a thread");
    let mut filter = Filter::new(opts, symbolizer(), pipeline.reporter());
    pipeline.attach(&mut filter);
    filter.defer_lookups(|| true);
    let mut out = pipeline.output();
    let _ = filter.run("<fuzz>", Trickle { data: input, step }, &mut out);
    let _ = filter.finish(&mut out);
    drop(filter);
    pipeline.finish().expect("printed");
    let bytes = printed.0.lock().expect("lock").clone();
    bytes
}

/// Output kept where the test can read it after the printing thread wrote
/// it.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// No `{{{` and no ESC: nothing the filter may change under `--demux`.
fn markup_free(input: &[u8]) -> bool {
    !input.contains(&0x1b) && !input.windows(3).any(|w| w == b"{{{")
}

/// Each JSON object of a line shown as text spans alone (`"text"`, or
/// `"bytes"` where the line is not UTF-8) holds that input line's bytes.
fn check_text_lines(out: &[u8], input: &[u8]) {
    let lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    'objects: for object in out.split(|&b| b == b'\n').filter(|o| !o.is_empty()) {
        let v: serde_json::Value = serde_json::from_slice(object).expect("a JSON object a line");
        let (Some(number), Some(spans)) = (v["line"].as_u64(), v["spans"].as_array()) else {
            continue;
        };
        let mut bytes = Vec::new();
        for span in spans {
            match (&span["bytes"], &span["text"]) {
                (serde_json::Value::Array(b), _) => {
                    bytes.extend(b.iter().map(|x| x.as_u64().expect("a byte") as u8));
                }
                (serde_json::Value::Null, serde_json::Value::String(t))
                    if span.as_object().is_some_and(|o| o.len() == 1) =>
                {
                    bytes.extend_from_slice(t.as_bytes());
                }
                _ => continue 'objects,
            }
        }
        let line = usize::try_from(number - 1).ok().and_then(|i| lines.get(i));
        assert_eq!(Some(&&bytes[..]), line, "line {number} as JSON text");
    }
}
