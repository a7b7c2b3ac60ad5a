use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::{Args, Subcommand, ValueEnum};

use symfilter::gsym::GsymFile;
use symfilter::gsym::types::{Endian, LookupResult, VERSION_1, VERSION_2};
use symfilter::gsym_create::writer::{EncodeOptions, GsymBuilder};
use symfilter::gsym_create::{self, ConvertStats};
use symfilter::symbols::BuildId;

#[derive(Subcommand, Debug)]
pub enum GsymCommand {
    /// Write a GSYM file from an ELF/DWARF file or a Breakpad .sym file.
    Create(CreateArgs),
    /// Look up addresses in a GSYM file (output as `llvm-gsymutil --address`).
    Lookup(LookupArgs),
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ByteOrder {
    Little,
    Big,
}

#[derive(Args, Debug)]
pub struct CreateArgs {
    /// ELF file with DWARF (and/or a symbol table), or a Breakpad .sym file.
    pub input: PathBuf,
    /// Where to write the GSYM file.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// GSYM format version to write (1 is what LLVM 22 reads; 2 has 64-bit
    /// offsets).
    #[arg(long = "format-version", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=2))]
    pub format_version: u16,
    /// Byte order of the output.
    #[arg(long, value_enum, default_value_t = ByteOrder::Little)]
    pub byte_order: ByteOrder,
    /// Force the address offset size (1, 2, 4 or 8 bytes); the default is
    /// the smallest that fits.
    #[arg(long, value_name = "BYTES")]
    pub addr_off_size: Option<u8>,
    /// Make offsets relative to the first function instead of the image
    /// base (allows smaller address offsets).
    #[arg(long)]
    pub base_at_first_function: bool,
    /// For Breakpad input: the module's image base (first PT_LOAD p_vaddr,
    /// e.g. 0x400000 for a non-PIE x86-64 executable), added to the .sym's
    /// module-relative addresses.
    #[arg(long, value_name = "HEX", value_parser = parse_hex)]
    pub image_base: Option<u64>,
    /// UUID to store (hex); default: the ELF build ID, or the Breakpad
    /// code ID / debug ID.
    #[arg(long, value_name = "HEX")]
    pub uuid: Option<String>,
}

#[derive(Args, Debug)]
pub struct LookupArgs {
    /// The GSYM file.
    pub gsym: PathBuf,
    /// Addresses (hex with 0x, or decimal); read from standard input, one a
    /// line, when none are given.
    pub addresses: Vec<String>,
}

pub fn run(cmd: GsymCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        GsymCommand::Create(args) => create(args),
        GsymCommand::Lookup(args) => lookup(args),
    }
}

fn create(args: CreateArgs) -> anyhow::Result<ExitCode> {
    let t0 = Instant::now();
    let data =
        std::fs::read(&args.input).with_context(|| format!("reading {}", args.input.display()))?;
    let mut b = GsymBuilder::new();
    let is_elf = data.starts_with(b"\x7fELF");
    let stats: ConvertStats = if is_elf {
        gsym_create::from_elf(&data, args.input.parent(), &mut b)
            .with_context(|| format!("converting {}", args.input.display()))?
    } else if data.starts_with(b"MODULE ") {
        gsym_create::from_breakpad(&data, args.image_base.unwrap_or(0), &mut b)
            .with_context(|| format!("converting {}", args.input.display()))?
    } else {
        bail!(
            "{}: neither an ELF file nor a Breakpad .sym file",
            args.input.display()
        );
    };
    if let Some(hex) = &args.uuid {
        let id = BuildId::from_hex(hex).with_context(|| format!("--uuid {hex}: not hex"))?;
        b.set_uuid(&id.0);
    }
    let pruned = b.finalize();
    if (args.base_at_first_function || !is_elf)
        && let Some(first) = b.first_address()
    {
        b.set_base_address(first);
    }
    let opts = EncodeOptions {
        version: if args.format_version == 2 {
            VERSION_2
        } else {
            VERSION_1
        },
        endian: match args.byte_order {
            ByteOrder::Little => Endian::Little,
            ByteOrder::Big => Endian::Big,
        },
        addr_off_size: args.addr_off_size,
    };
    let bytes = b.encode(&opts)?;
    std::fs::write(&args.output, &bytes)
        .with_context(|| format!("writing {}", args.output.display()))?;
    let (what, source_bytes) = if is_elf {
        ("DWARF", stats.dwarf_bytes)
    } else {
        ("FUNC records", data.len() as u64)
    };
    let ratio = if bytes.is_empty() {
        0.0
    } else {
        source_bytes as f64 / bytes.len() as f64
    };
    eprintln!(
        "symfilter: {}: {} functions from {what}, {} from the symbol table, {} pruned; wrote {} bytes to {} \
         in {:.3}s ({} is {source_bytes} bytes, {ratio:.1}x)",
        args.input.display(),
        stats.from_debug_info,
        stats.from_symbols,
        pruned,
        bytes.len(),
        args.output.display(),
        t0.elapsed().as_secs_f64(),
        if is_elf { "DWARF" } else { "the .sym" },
    );
    Ok(ExitCode::SUCCESS)
}

fn parse_hex(s: &str) -> Result<u64, String> {
    let h = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    u64::from_str_radix(h, 16).map_err(|e| format!("{s:?}: {e}"))
}

fn parse_addr(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Prints one result exactly as `llvm-gsymutil` does.
pub fn write_result(
    out: &mut impl Write,
    addr: u64,
    r: &Result<LookupResult, symfilter::gsym::types::GsymError>,
) -> std::io::Result<()> {
    write!(out, "{addr:#018x}: ")?;
    let r = match r {
        Ok(r) => r,
        Err(e) => return writeln!(out, "error: {e}"),
    };
    let n = r.locations.len();
    for (i, loc) in r.locations.iter().enumerate() {
        if i > 0 {
            write!(out, "\n{:20}", "")?;
        }
        write!(out, "{}", loc.name)?;
        // LLVM keeps this offset in a uint32_t.
        let offset = loc.offset as u32;
        if offset != 0 {
            write!(out, " + {offset}")?;
        }
        if !loc.dir.is_empty() || !loc.base.is_empty() {
            write!(out, " @ ")?;
            if !loc.dir.is_empty() {
                let sep = if loc.dir.contains('\\') && !loc.dir.contains('/') {
                    '\\'
                } else {
                    '/'
                };
                write!(out, "{}{sep}", loc.dir)?;
            }
            if loc.base.is_empty() {
                write!(out, "<invalid-file>")?;
            } else {
                write!(out, "{}", loc.base)?;
            }
            write!(out, ":{}", loc.line)?;
        }
        if i + 1 != n {
            write!(out, " [inlined]")?;
        }
    }
    writeln!(out)
}

fn lookup(args: LookupArgs) -> anyhow::Result<ExitCode> {
    let file = GsymFile::open(&args.gsym).with_context(|| format!("{}", args.gsym.display()))?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    writeln!(out, "Looking up addresses in \"{}\":", args.gsym.display())?;
    let mut one = |s: &str| -> anyhow::Result<()> {
        let Some(addr) = parse_addr(s) else {
            bail!("{s:?} is not an address");
        };
        write_result(&mut out, addr, &file.lookup(addr))?;
        Ok(())
    };
    if args.addresses.is_empty() {
        use std::io::BufRead;
        for line in std::io::stdin().lock().lines() {
            let line = line?;
            if !line.trim().is_empty() {
                one(&line)?;
            }
        }
    } else {
        for a in &args.addresses {
            one(a)?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
