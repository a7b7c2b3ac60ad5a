//! Read-only file mappings that survive the file being truncated.
//!
//! Object, `.sym`, GSYM and trace files are mapped, not read: only the
//! pages a lookup touches are loaded, and a process that maps the same file
//! twice shares its pages. But when another process truncates a mapped
//! file, touching a page past its new end raises `SIGBUS`, whose default
//! action kills symfilter with the rest of the log.
//!
//! Every [`FileMap`] is entered in a fixed table that a `SIGBUS` handler
//! reads (without locks or allocation): a fault inside a mapping replaces
//! that whole mapping with zero pages, so the faulting read and all later
//! ones see zeros (the parsers take any bytes), and marks it; [`take_faults`]
//! then names the file once, for a diagnostic. A fault anywhere else goes to
//! the disposition that was there before (Rust's runtime's, or the default).
//! A file mapped when the table is full is read into memory instead.

use std::fs::File;
use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Mutex, Once, OnceLock};

/// How many mappings the handler can know of at once.
const SLOTS: usize = 4096;
/// `start` of a slot that is being filled or emptied: the handler skips it.
const BUSY: usize = usize::MAX;

const CLEAN: u8 = 0;
const FAULTED: u8 = 1;
const REPORTED: u8 = 2;

struct Slot {
    /// Address of the mapping; 0 when the slot is free.
    start: AtomicUsize,
    len: AtomicUsize,
    state: AtomicU8,
}

static TABLE: [Slot; SLOTS] = [const {
    Slot {
        start: AtomicUsize::new(0),
        len: AtomicUsize::new(0),
        state: AtomicU8::new(CLEAN),
    }
}; SLOTS];
/// Faults so far; [`take_faults`] returns at once while it is unchanged.
static FAULTS: AtomicUsize = AtomicUsize::new(0);
/// Set by the first fault inside a mapping, before its pages are replaced:
/// see [`any_fault`].
static ANY_FAULT: AtomicBool = AtomicBool::new(false);
static SEEN: AtomicUsize = AtomicUsize::new(0);
/// The file of each slot, for [`take_faults`] (never read by the handler).
static PATHS: Mutex<Vec<Option<PathBuf>>> = Mutex::new(Vec::new());
static PAGE: AtomicUsize = AtomicUsize::new(4096);
static PREVIOUS: OnceLock<Previous> = OnceLock::new();
static INSTALL: Once = Once::new();

/// The `SIGBUS` disposition before ours.
struct Previous(libc::sigaction);
// SAFETY: plain data (a handler address, flags and a signal mask).
unsafe impl Sync for Previous {}
unsafe impl Send for Previous {}

/// A read-only view of a whole file: mapped, or read into memory.
pub struct FileMap {
    inner: Inner,
}

enum Inner {
    Mapped {
        map: ManuallyDrop<memmap2::Mmap>,
        slot: usize,
    },
    Read(Vec<u8>),
}

impl FileMap {
    /// Maps `file` (opened from `path`, which names it in diagnostics).
    pub fn open(file: &File, path: &Path) -> std::io::Result<FileMap> {
        INSTALL.call_once(install);
        let Some(slot) = claim() else {
            // No room to guard another mapping: read the file.
            return Ok(FileMap {
                inner: Inner::Read(read_whole(file)?),
            });
        };
        // SAFETY: read-only and private to this process; the file changing
        // under it is what the SIGBUS guard is for.
        let map = match unsafe { memmap2::Mmap::map(file) } {
            Ok(m) => m,
            Err(e) => {
                TABLE[slot].start.store(0, Ordering::Release);
                return Err(e);
            }
        };
        {
            let mut paths = super::lock(&PATHS);
            if paths.len() <= slot {
                paths.resize(slot + 1, None);
            }
            paths[slot] = Some(path.to_path_buf());
        }
        let s = &TABLE[slot];
        s.state.store(CLEAN, Ordering::Relaxed);
        s.len.store(map.len(), Ordering::Relaxed);
        // An empty map has no address to guard (and cannot fault).
        let start = if map.is_empty() {
            BUSY
        } else {
            map.as_ptr() as usize
        };
        s.start.store(start, Ordering::Release);
        Ok(FileMap {
            inner: Inner::Mapped {
                map: ManuallyDrop::new(map),
                slot,
            },
        })
    }

    /// Whether the file shrank under the mapping (its bytes now read as
    /// zeros).
    pub fn faulted(&self) -> bool {
        match &self.inner {
            Inner::Mapped { slot, .. } => TABLE[*slot].state.load(Ordering::Acquire) != CLEAN,
            Inner::Read(_) => false,
        }
    }
}

impl std::ops::Deref for FileMap {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.inner {
            Inner::Mapped { map, .. } => map,
            Inner::Read(v) => v,
        }
    }
}

impl AsRef<[u8]> for FileMap {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl Drop for FileMap {
    fn drop(&mut self) {
        if let Inner::Mapped { map, slot } = &mut self.inner {
            let s = &TABLE[*slot];
            // Out of the handler's sight before the address range is given
            // back: it must never map zeros over a later mapping.
            s.start.store(BUSY, Ordering::Release);
            // SAFETY: dropped once, here; nothing borrows it any more.
            unsafe { ManuallyDrop::drop(map) };
            if let Ok(mut paths) = PATHS.lock()
                && let Some(p) = paths.get_mut(*slot)
            {
                *p = None;
            }
            s.start.store(0, Ordering::Release);
        }
    }
}

/// Whether any mapping has faulted in this process: until one does, no
/// file can have been read as zeros, and a caller checking after every
/// read (see [`FileMap::faulted`]) has nothing to look at.
pub fn any_fault() -> bool {
    ANY_FAULT.load(Ordering::SeqCst)
}

/// The files that were truncated under their mapping since the last call
/// (each once).
pub fn take_faults() -> Vec<PathBuf> {
    let now = FAULTS.load(Ordering::Acquire);
    // Read before written: callers on several threads ask after every
    // lookup, and a write each time would pass the line between CPUs.
    if SEEN.load(Ordering::Acquire) == now || SEEN.swap(now, Ordering::AcqRel) == now {
        return Vec::new();
    }
    let paths = super::lock(&PATHS);
    let mut out = Vec::new();
    for (i, s) in TABLE.iter().enumerate() {
        if s.state
            .compare_exchange(FAULTED, REPORTED, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            out.push(paths.get(i).cloned().flatten().unwrap_or_default());
        }
    }
    out
}

/// What happened to a file [`take_faults`] returns.
pub const TRUNCATED: &str = "file was truncated while in use; nothing more is read from it";

/// The diagnostic for a file [`take_faults`] returned.
pub fn fault_message(path: &Path) -> String {
    format!("{}: {TRUNCATED}", path.display())
}

/// The whole file, wherever its read position is (callers may have read
/// its magic already).
fn read_whole(file: &File) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let mut data = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read_at(&mut buf, data.len() as u64)?;
        if n == 0 {
            return Ok(data);
        }
        data.extend_from_slice(&buf[..n]);
    }
}

/// A free slot, marked busy.
fn claim() -> Option<usize> {
    TABLE.iter().position(|s| {
        s.start
            .compare_exchange(0, BUSY, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    })
}

fn install() {
    // SAFETY: sysconf and sigaction with valid arguments.
    unsafe {
        let page = libc::sysconf(libc::_SC_PAGESIZE);
        if page > 0 {
            PAGE.store(page as usize, Ordering::Relaxed);
        }
        let mut previous: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) != 0 {
            return;
        }
        let _ = PREVIOUS.set(Previous(previous));
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigbus as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
    }
}

/// Async-signal-safe: atomics, `mmap` and `sigaction` only.
extern "C" fn on_sigbus(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let (addr, code) = unsafe { ((*info).si_addr() as usize, (*info).si_code) };
    let page = PAGE.load(Ordering::Relaxed);
    for s in &TABLE {
        let start = s.start.load(Ordering::Acquire);
        if start == 0 || start == BUSY || addr < start {
            continue;
        }
        let len = s.len.load(Ordering::Acquire);
        if addr - start >= len {
            continue;
        }
        let whole = len.div_ceil(page) * page;
        // Before the zeros: whoever reads them sees the flag afterwards.
        ANY_FAULT.store(true, Ordering::SeqCst);
        // SAFETY: replaces exactly the pages of a live mapping this process
        // owns (the slot is cleared before that mapping is unmapped).
        let p = unsafe {
            libc::mmap(
                start as *mut libc::c_void,
                whole,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if p != libc::MAP_FAILED {
            let _ = s
                .state
                .compare_exchange(CLEAN, FAULTED, Ordering::AcqRel, Ordering::Relaxed);
            FAULTS.fetch_add(1, Ordering::AcqRel);
            return;
        }
        break;
    }
    // Not a mapping of ours: the previous disposition takes the retried
    // fault (or, for a signal sent by a process, the signal again).
    // SAFETY: restoring a disposition read from the kernel.
    unsafe {
        match PREVIOUS.get() {
            Some(Previous(prev)) => libc::sigaction(libc::SIGBUS, prev, std::ptr::null_mut()),
            None => {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut())
            }
        };
        if code <= 0 {
            libc::raise(libc::SIGBUS);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn truncation_reads_zeros_and_is_reported_once() {
        let mut tmp = tempfile::NamedTempFile::new().expect("temp file");
        let page = PAGE.load(Ordering::Relaxed).max(4096);
        tmp.write_all(&vec![0xab; 4 * page]).expect("write");
        let file = File::open(tmp.path()).expect("open");
        let map = FileMap::open(&file, tmp.path()).expect("map");
        assert_eq!(map[0], 0xab);
        assert!(!map.faulted());
        tmp.as_file().set_len(page as u64).expect("truncate");
        // Past the new end: SIGBUS, turned into zeros.
        let far = std::hint::black_box(&map[3 * page]);
        assert_eq!(*far, 0);
        assert_eq!(map[0], 0, "the whole mapping reads as zeros");
        assert!(map.faulted());
        let faults = take_faults();
        assert!(faults.contains(&tmp.path().to_path_buf()), "{faults:?}");
        assert!(!take_faults().contains(&tmp.path().to_path_buf()));
    }

    #[test]
    fn the_fallback_reads_from_the_start() {
        let mut tmp = tempfile::NamedTempFile::new().expect("temp file");
        tmp.write_all(b"\x7fELF and the rest").expect("write");
        let mut file = File::open(tmp.path()).expect("open");
        let mut magic = [0u8; 4];
        std::io::Read::read_exact(&mut file, &mut magic).expect("magic");
        assert_eq!(read_whole(&file).expect("read"), b"\x7fELF and the rest");
    }

    #[test]
    fn empty_files_map_to_nothing() {
        let tmp = tempfile::NamedTempFile::new().expect("temp file");
        let file = File::open(tmp.path()).expect("open");
        let map = FileMap::open(&file, tmp.path()).expect("map");
        assert!(map.is_empty());
        assert!(!map.faulted());
    }
}
