//! systemd-coredump's stack traces (in the journal and `coredumpctl
//! info`), written with elfutils' libdwfl:
//!
//! ```text
//!     Module /usr/bin/app with build-id 3d5e0b9f...
//!     Stack trace of thread 4242:
//!     #0  0x00007f7bbd2a9e2c __pthread_kill_implementation (libc.so.6 + 0x8ee2c)
//!     #3  0x00005555555551a9 n/a (/usr/bin/app + 0x11a9)
//! ```
//!
//! A frame names its module as the `Module` line before it does; that line
//! gives the build ID. The address printed is the unwound one: a return
//! address for every frame but the first, so those are stepped back before
//! the lookup. The offset is from the module's lowest mapped address, which
//! is the ELF address for shared libraries and position-independent
//! executables (not for a non-PIE executable's).

use super::lex::{build_id, end, frame_number, hex0x, spaces};
use super::{Adjust, CrashFrame, Producer, Recognised};

/// `Module NAME ... with build-id HEX` (text may sit between, e.g. a
/// package description).
pub fn module_line(line: &[u8]) -> Option<Recognised<'_>> {
    let start = line.iter().position(|&b| b != b' ' && b != b'\t')?;
    let rest = line[start..].strip_prefix(b"Module ")?;
    let name_len = rest.iter().position(|&b| b == b' ')?;
    let name = &rest[..name_len];
    let at = memchr::memmem::rfind(rest, b" with build-id ")?;
    if at < name_len {
        return None;
    }
    let (id, after) = build_id(&rest[at + b" with build-id ".len()..])?;
    end(after, after)?;
    Some(Recognised::ModuleBuildId { name, build_id: id })
}

/// `#N  0xADDR FUNCTION (MODULE + 0xOFF)` from its `#`.
pub fn frame(s: &[u8]) -> Option<CrashFrame<'_>> {
    let (n, rest) = frame_number(s)?;
    let rest = spaces(rest)?;
    let (addr, after) = hex0x(rest)?;
    if rest.len() - after.len() != 18 {
        return None;
    }
    let rest = after.strip_prefix(b" ")?;
    let func_len = rest.iter().position(|&b| b == b' ')?;
    if func_len == 0 {
        return None;
    }
    let rest = rest[func_len..].strip_prefix(b" (")?;
    let plus = memchr::memmem::find(rest, b" + 0x")?;
    let module = &rest[..plus];
    if module.is_empty() || module.contains(&b')') {
        return None;
    }
    let (offset, rest) = hex0x(&rest[plus + 3..])?;
    let rest = rest.strip_prefix(b")")?;
    let len = end(rest, s)?;
    Some(CrashFrame {
        producer: Producer::Systemd,
        frame: Some(n),
        addr: Some(addr),
        module,
        offset,
        build_id: None,
        adjust: if n == 0 {
            Adjust::AsPrinted
        } else {
            Adjust::ReturnAddress
        },
        span: 0..len,
    })
}
