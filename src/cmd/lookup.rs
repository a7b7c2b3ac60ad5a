//! `symfilter lookup`: symbolize module-relative addresses of one module.

use std::borrow::Cow;
use std::io::{self, BufRead, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::{Args, ValueEnum};

use super::sources::SourceArgs;
use symfilter::render::{Lookup, Resolved};
use symfilter::symbols::{
    BuildId, CodeInfo, CodeWant, DataInfo, DataWant, Miss, ModuleKey, SymbolSource,
};

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("module").required(true).args(["build_id", "file"])))]
pub struct LookupArgs {
    /// Build ID (hex) of the module, found through the configured sources.
    #[arg(long, value_name = "HEX")]
    pub build_id: Option<String>,
    /// ELF file to read directly (no build-ID search for the file itself).
    #[arg(long, value_name = "PATH")]
    pub file: Option<PathBuf>,
    /// Module-relative ELF virtual addresses, hexadecimal with or without
    /// 0x; one per line on standard input when none are given.
    #[arg(value_name = "ADDR")]
    pub addresses: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Look up data instead of code: `0xADDR NAME+0xOFFSET FILE:LINE` for the
    /// global object covering each address (declaration file and line).
    #[arg(long)]
    pub data: bool,
    /// Print raw (mangled) names (JSON gives both names always).
    #[arg(long)]
    pub no_demangle: bool,
    /// Give the column of a location on line 0 (compiler-generated code) as
    /// llvm-symbolizer does, `FILE:0:COLUMN`. Off by default, as in
    /// addr2line.
    #[arg(long)]
    pub line0_columns: bool,
    /// The module's image base (its first `PT_LOAD`'s `p_vaddr`, hex, e.g.
    /// 0x400000 for a non-PIE executable), for Breakpad `.sym` files that do
    /// not tell it themselves.
    #[arg(long, value_name = "HEX", value_parser = parse_image_base, conflicts_with = "file")]
    pub image_base: Option<u64>,
    #[command(flatten)]
    pub sources: Box<SourceArgs>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// `0xADDR FUNCTION FILE:LINE[:COLUMN]`, one line per frame, innermost first.
    Text,
    /// One JSON object per address, one per line, with the members and
    /// names of the filter's `pc` and `data` objects (`--format=json`).
    Json,
}

pub fn run(args: LookupArgs) -> anyhow::Result<ExitCode> {
    let mut symbolizer = None;
    let mut direct = None;
    let source: &dyn SymbolSource = if let Some(path) = &args.file {
        direct.insert(
            symfilter::elf::open_file(path, &args.sources.places().debug_dirs())
                .map_err(|miss| anyhow::anyhow!("{}: {miss}", path.display()))?,
        )
    } else {
        let hex = args.build_id.as_deref().unwrap_or_default();
        let build_id = BuildId::from_hex(hex).with_context(|| format!("bad build ID '{hex}'"))?;
        let key = ModuleKey {
            image_base_hint: args.image_base,
            ..ModuleKey::new(build_id, "")
        };
        let s = symbolizer.insert(args.sources.symbolizer()?);
        match s.open(&key).source {
            Ok(src) => src.inner(),
            Err(trail) => {
                let mut msg = format!("build ID {hex} not found");
                for a in trail {
                    if let Some(f) = &a.failure {
                        match f {
                            Miss::NotFound => {
                                msg.push_str(&format!("\n  {}: {}: not found", a.provider, a.place))
                            }
                            other => msg.push_str(&format!("\n  {}: {other}", a.provider)),
                        }
                    }
                }
                anyhow::bail!(msg);
            }
        }
    };

    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut printer = Printer {
        format: args.format,
        demangle: !args.no_demangle,
        data: args.data,
        code: CodeWant {
            line0_columns: args.line0_columns,
            ..CodeWant::default()
        },
        bad: 0,
    };
    if args.addresses.is_empty() {
        // The lines already read are answered together (a batch); a line
        // typed at a terminal or written to a pipe alone is answered at once.
        let stdin = io::stdin();
        // A 16 KiB buffer's worth of addresses a batch: sorted, they already
        // find their units in the cache (larger batches would hold more).
        let mut input = io::BufReader::with_capacity(16 << 10, stdin.lock());
        let mut line = String::new();
        loop {
            let buf = input.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            match memchr::memrchr(b'\n', buf) {
                Some(last) => {
                    let text = String::from_utf8_lossy(&buf[..last]).into_owned();
                    input.consume(last + 1);
                    let batch: Vec<&str> = text.lines().map(str::trim).collect();
                    printer.batch(source, &batch, &mut out)?;
                }
                None => {
                    line.clear();
                    input.read_line(&mut line)?;
                    printer.batch(source, &[line.trim()], &mut out)?;
                }
            }
            out.flush()?;
        }
    } else {
        let batch: Vec<&str> = args.addresses.iter().map(String::as_str).collect();
        printer.batch(source, &batch, &mut out)?;
    }
    out.flush()?;
    // The process ends here: freeing the parsed DWARF and unmapping the
    // files would be work for nothing (a few percent of a one-address run).
    std::mem::forget(direct);
    std::mem::forget(symbolizer);
    Ok(if printer.bad > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

struct Printer {
    format: Format,
    demangle: bool,
    data: bool,
    /// What code lookups ask for (data lookups always ask for the
    /// declaration: it is printed).
    code: CodeWant,
    bad: usize,
}

fn parse_image_base(text: &str) -> Result<u64, String> {
    parse_addr(text).ok_or_else(|| format!("'{text}' is not a hexadecimal address"))
}

fn parse_addr(text: &str) -> Option<u64> {
    let hex = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .unwrap_or(text);
    if hex.is_empty() {
        return None;
    }
    u64::from_str_radix(hex, 16).ok()
}

impl Printer {
    fn name<'a>(&self, raw: &'a str) -> Cow<'a, str> {
        if !self.demangle {
            return Cow::Borrowed(raw);
        }
        Cow::Owned(symfilter::demangle::demangle_llvm(raw))
    }

    /// Answer a batch of addresses (blank lines skipped), in their order.
    /// Code addresses are looked up in address order: the units and
    /// functions parsed for one are then still in the cache for its
    /// neighbours (random order spends much of its time waiting on memory).
    fn batch(
        &mut self,
        source: &dyn SymbolSource,
        texts: &[&str],
        out: &mut impl Write,
    ) -> io::Result<()> {
        let mut code: Vec<(u64, Option<Result<CodeInfo, Miss>>)> = Vec::new();
        if !self.data && texts.len() > 1 {
            code = texts
                .iter()
                .filter_map(|t| parse_addr(t))
                .map(|a| (a, None))
                .collect();
            code.sort_unstable_by_key(|c| c.0);
            code.dedup_by_key(|c| c.0);
            for (addr, answer) in &mut code {
                *answer = Some(source.lookup_code(*addr, self.code));
            }
        }
        for text in texts.iter().filter(|t| !t.is_empty()) {
            let Some(addr) = parse_addr(text) else {
                self.bad += 1;
                eprintln!("symfilter: bad address '{text}'");
                continue;
            };
            if self.data {
                let res = source.lookup_data(addr, DataWant { declaration: true });
                self.print_data(addr, res, out)?;
                continue;
            }
            let known = code.binary_search_by_key(&addr, |c| c.0).ok();
            let res = match known.and_then(|i| code[i].1.as_ref()) {
                Some(res) => Cow::Borrowed(res),
                None => Cow::Owned(source.lookup_code(addr, self.code)),
            };
            match self.format {
                Format::Text => self.text_code(addr, &res, out)?,
                Format::Json => {
                    let lookup = match res.into_owned() {
                        Ok(info) => Lookup::Code(Arc::new(info)),
                        Err(miss) => Lookup::Failed(miss),
                    };
                    self.json(addr, lookup, out)?
                }
            }
        }
        Ok(())
    }

    fn text_code(
        &self,
        addr: u64,
        res: &Result<CodeInfo, Miss>,
        out: &mut impl Write,
    ) -> io::Result<()> {
        let info = match res {
            Ok(info) => info,
            Err(_) => return writeln!(out, "0x{addr:x} ?? ??:0"),
        };
        let last = info.frames.len().saturating_sub(1);
        for (i, f) in info.frames.iter().enumerate() {
            // The outermost frame is named from the symbol table when a
            // symbol covers the address (as llvm-symbolizer does).
            let symbol_name = info.symbol.as_ref().map(|s| &*s.name);
            let raw = match (i == last, symbol_name) {
                (true, Some(name)) => Some(name),
                _ => f.function.as_deref(),
            };
            let name = raw.map(|r| self.name(r));
            let file = f.file.as_deref().or_else(|| {
                (i == last)
                    .then(|| info.symbol.as_ref().and_then(|s| s.file.as_deref()))
                    .flatten()
            });
            write!(
                out,
                "0x{addr:x} {} {}:{}",
                name.as_deref().unwrap_or("??"),
                file.unwrap_or("??"),
                f.line
            )?;
            if f.column != 0 {
                write!(out, ":{}", f.column)?;
            }
            writeln!(out)?;
        }
        if info.frames.is_empty() {
            let (name, file) = match &info.symbol {
                Some(s) => (self.name(&s.name), s.file.as_deref()),
                None => (Cow::Borrowed("??"), None),
            };
            writeln!(out, "0x{addr:x} {name} {}:0", file.unwrap_or("??"))?;
        }
        Ok(())
    }

    /// One object of `--format=json`, in the filter's JSON vocabulary.
    fn json(&self, addr: u64, lookup: Lookup, out: &mut impl Write) -> io::Result<()> {
        let mut buf = Vec::new();
        let res = Resolved {
            addr,
            adjusted: addr,
            place: None,
            lookup,
        };
        symfilter::render::json::write_lookup(&mut buf, &res);
        out.write_all(&buf)
    }

    fn print_data(
        &self,
        addr: u64,
        res: Result<DataInfo, Miss>,
        out: &mut impl Write,
    ) -> io::Result<()> {
        match self.format {
            Format::Text => match &res {
                Ok(DataInfo {
                    symbol: Some(s),
                    decl_file,
                    decl_line,
                }) => {
                    writeln!(
                        out,
                        "0x{addr:x} {}+0x{:x} {}:{decl_line}",
                        self.name(&s.name),
                        addr.wrapping_sub(s.address),
                        decl_file.as_deref().unwrap_or("??"),
                    )
                }
                _ => writeln!(out, "0x{addr:x} ?? ??:0"),
            },
            Format::Json => {
                let lookup = match res {
                    Ok(d) => Lookup::Data(Arc::new(d)),
                    Err(miss) => Lookup::Failed(miss),
                };
                self.json(addr, lookup, out)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert_eq!(parse_addr("0x1a"), Some(0x1a));
        assert_eq!(parse_addr("1A"), Some(0x1a));
        assert_eq!(parse_addr("0x"), None);
        assert_eq!(parse_addr("xyz"), None);
        assert_eq!(parse_addr("0x1ffffffffffffffff"), None);
    }

    #[test]
    fn demangling() {
        let demangle = |s: &str| symfilter::demangle::demangle_llvm(s);
        assert_eq!(demangle("_Z3fooi"), "foo(int)");
        assert_eq!(demangle("main"), "main");
        assert_eq!(demangle("_ZN3foo3barE"), "foo::bar");
    }
}
