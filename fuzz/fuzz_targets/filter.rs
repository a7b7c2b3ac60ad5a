//! Fuzz the lexer, the typed field parsers, the context state machine and
//! every renderer: arbitrary bytes through `Filter::run`, split into reads of
//! a size chosen by the first byte, with small line and group limits so the
//! over-long-line and hexdict paths are reached. Crash-report frames (see
//! `symfilter::crash`) naming the fixture `testdata/bin/app_c_O2`'s build ID
//! resolve, so their rewriting is reached too.
#![no_main]

use std::io::{self, Read};

use libfuzzer_sys::fuzz_target;
use symfilter::filter::{Diagnostics, Filter, Options};
use symfilter::render::Format;
use symfilter::symbols::{Symbolizer, SymbolizerConfig};

/// A symbolizer that knows one fixture binary (build ID
/// 52083ec89bc0c7c102ccde8f63e3d8150be019b5), so frames naming it resolve.
fn symbolizer() -> Symbolizer {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/bin/app_c_O2");
    let providers = symfilter::elf::providers(&[], &[fixture]).unwrap_or_default();
    Symbolizer::new(SymbolizerConfig { providers })
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
    for (i, format) in [Format::Human, Format::Llvm, Format::Json].into_iter().enumerate() {
        let opts = Options {
            format,
            color: first & 0x80 != 0,
            keep_context: first & 0x40 != 0,
            max_line: if i == 0 { 256 } else { 1 << 16 },
            max_group_lines: 16,
            max_group_bytes: 1024,
            ..Options::default()
        };
        let diag = Diagnostics::new(Box::new(io::sink()), false);
        let mut filter = Filter::with_diagnostics(opts, symbolizer(), diag);
        let mut out = Vec::new();
        let _ = filter.run("<fuzz>", Trickle { data: input, step }, &mut out);
        let _ = filter.finish(&mut out);
    }
});
