//! LLVM's crash handler stack dump (`llvm::sys::PrintStackTrace`) when
//! llvm-symbolizer gave it nothing for a frame:
//!
//! ```text
//!  #0 0x00007f2b1c9d8a3e (/usr/lib/llvm-22/lib/libLLVM.so.22.1+0x4dd8a3e)
//! ```
//!
//! No build ID is printed: a frame is symbolized when an earlier line
//! (a sanitizer frame, an Android frame, a systemd `Module` line) gave the
//! same module's build ID. The addresses are return addresses from
//! `backtrace()`, printed unadjusted, so they are stepped back.

use super::lex::{end, frame_number, hex0x};
use super::sanitizer::module_offset;
use super::{Adjust, CrashFrame, Producer};

pub fn frame(s: &[u8]) -> Option<CrashFrame<'_>> {
    let (n, rest) = frame_number(s)?;
    let rest = rest.strip_prefix(b" ")?;
    let (addr, rest) = hex0x(rest)?;
    let rest = rest.strip_prefix(b" (")?;
    let (module, offset, rest) = module_offset(rest)?;
    let len = end(rest, s)?;
    Some(CrashFrame {
        producer: Producer::Llvm,
        frame: Some(n),
        addr: Some(addr),
        module,
        offset,
        build_id: None,
        adjust: Adjust::ReturnAddress,
        span: 0..len,
    })
}
