//! Huge pages for the threads' heaps. A log of many distinct addresses
//! makes the filter's front thread fill tens of megabytes of heap (parsed
//! units, answers, names) that both threads then read at random, and the
//! printing thread fills its own with the answers it looks up, the units
//! it parses and rendered text (see [`crate::pipeline`]); in 2 MiB pages instead of 4 KiB ones far fewer of those reads
//! need a page-table walk, and far fewer first touches a page fault
//! (BENCHMARKS.md has what that saves).
//!
//! glibc's malloc gives each thread an arena in a heap of its own: a
//! region of [`HEAP_MAX`] bytes, aligned to its size, made readable as the
//! arena grows. A thread that advises that region (`MADV_HUGEPAGE`) gets
//! what it allocates afterwards in huge pages wherever the system allows
//! them on advice (the kernel's usual `madvise` setting). The kernel maps a
//! huge page only where the whole 2 MiB around a first touch is readable,
//! and glibc makes a new heap readable only to `M_TOP_PAD` bytes past its
//! first block, then a few pages at a time: with the pad at [`HEAP_MAX`],
//! a new heap is readable whole from the start (the region is reserved
//! anyway; its pages are touched only as they are used). The main thread's
//! heap is glibc's other kind, grown with `brk`; with the same pad it grows
//! by [`HEAP_MAX`] at a time, and [`advise_main_heap`] grows it once and
//! advises it. The cost: a heap keeps that pad free at its top, so it is
//! never trimmed, and a log whose memory use peaks once keeps its peak.
//!
//! Only a hint: a region is advised only when `/proc/self/maps` shows a
//! heap of the expected shape where the thread's memory is, so on another
//! allocator or system nothing happens.

/// Size and alignment of glibc's per-thread heaps on 64-bit systems (twice
/// its largest mmap threshold).
pub const HEAP_MAX: usize = 64 << 20;

/// Bytes allocated to find the calling thread's heap.
const PROBE: usize = 16 << 10;

/// Make new thread heaps readable whole (see above); once per process,
/// before its threads start.
pub fn readable_heaps() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt with a valid parameter and value.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, HEAP_MAX as libc::c_int);
    }
}

/// Advise the calling thread's heap to use huge pages; whether it was
/// advised (false where the thread's memory is not in a heap of glibc's
/// shape, or the system has no huge pages).
pub fn advise_this_thread() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // Larger than what glibc keeps in a thread's cache (where a block
        // another thread allocated may wait), smaller than what it maps on
        // its own: taken from the thread's arena.
        let probe = vec![0u8; PROBE];
        let at = probe.as_ptr() as usize;
        let base = at & !(HEAP_MAX - 1);
        let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
            return false;
        };
        if !is_heap(&maps, base) {
            return false;
        }
        // SAFETY: the range is mapped, anonymous and the allocator's (just
        // checked); advice changes how its pages are backed, not what
        // they hold.
        unsafe { libc::madvise(base as *mut libc::c_void, HEAP_MAX, libc::MADV_HUGEPAGE) == 0 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    false
}

/// Bytes of the main thread's heap, past what it holds when advised, left
/// in small pages: a huge page is cleared whole (2 MiB) at its first touch,
/// which a short log's first symbolized line would wait for, and which on
/// a VM handing freed memory back to its host costs milliseconds.
const SMALL_PART: usize = 4 << 20;

/// A huge page on x86_64 and most other systems.
const HUGE_PAGE: usize = 2 << 20;

/// Blocks allocated to grow the main thread's heap: below glibc's mmap
/// threshold, so taken from the heap; never touched.
const GROW_BLOCK: usize = 64 << 10;

/// Advise the main thread's heap (glibc's `brk` heap, where the writing
/// filter allocates) to use huge pages, as [`advise_this_thread`] does a
/// thread's; on the main thread, after [`readable_heaps`]. Blocks beyond
/// the heap's top make glibc grow it, by the pad, unless it already has
/// room, and the heap as it then is gets the advice past its first
/// `SMALL_PART` bytes of room (growth past the pad, on a log needing
/// more, does not). Whether it was advised: false where the calling
/// thread's blocks are not in the `[heap]` mapping (another allocator, or
/// another thread's arena), or the heap has no room past the small part.
pub fn advise_main_heap() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: sbrk(0) reads the program break; it moves nothing.
        let brk = || unsafe { libc::sbrk(0) } as usize;
        let mut blocks = vec![Vec::<u8>::with_capacity(GROW_BLOCK)];
        let at = blocks[0].as_ptr() as usize;
        while brk() < at.saturating_add(HEAP_MAX / 2) && blocks.len() < HEAP_MAX / GROW_BLOCK {
            blocks.push(Vec::with_capacity(GROW_BLOCK));
        }
        drop(blocks);
        let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
            return false;
        };
        let Some((lo, hi)) = maps
            .lines()
            .filter(|line| line.ends_with("[heap]"))
            .filter_map(range)
            .find(|&(lo, hi)| (lo..hi).contains(&at))
        else {
            return false;
        };
        // What a short log uses stays in small pages (see SMALL_PART).
        let from = (at.max(lo) + SMALL_PART).next_multiple_of(HUGE_PAGE);
        if from >= hi {
            return false;
        }
        // SAFETY: the range is within the heap the thread's blocks come
        // from (just checked); advice changes how its pages are backed, not
        // what they hold.
        unsafe { libc::madvise(from as *mut libc::c_void, hi - from, libc::MADV_HUGEPAGE) == 0 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    false
}

/// Whether the memory at `at` is advised to use huge pages: the flag
/// `madvise(MADV_HUGEPAGE)` sets on its mapping, as `/proc/self/smaps`
/// shows it.
pub fn advised(at: usize) -> bool {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
    let mut inside = false;
    for line in smaps.lines() {
        if let Some((lo, hi)) = range(line) {
            inside = (lo..hi).contains(&at);
        } else if inside && let Some(flags) = line.strip_prefix("VmFlags:") {
            return flags.split_ascii_whitespace().any(|f| f == "hg");
        }
    }
    false
}

/// Whether `maps` (as `/proc/PID/maps` lists them) shows `base..base +
/// HEAP_MAX` covered exactly by anonymous mappings, back to back: a
/// thread heap's readable part and its reserve.
fn is_heap(maps: &str, base: usize) -> bool {
    let end = base + HEAP_MAX;
    let mut at = base;
    for line in maps.lines() {
        let Some((lo, hi)) = range(line) else {
            continue;
        };
        if hi <= base || lo >= end {
            continue;
        }
        // Offset, device and inode, then a name for file mappings and
        // special ones ([heap], [stack]); anonymous mappings may be named
        // `[anon:...]`.
        let name = line.split_ascii_whitespace().nth(5).unwrap_or("");
        if lo != at || !(name.is_empty() || name.starts_with("[anon:")) {
            return false;
        }
        at = hi;
    }
    at == end
}

/// The address range a line of `/proc/PID/maps` (or of `smaps`) starts
/// with, `lo-hi` in hexadecimal; `None` for other lines.
fn range(line: &str) -> Option<(usize, usize)> {
    let (lo, hi) = line.split_ascii_whitespace().next()?.split_once('-')?;
    Some((
        usize::from_str_radix(lo, 16).ok()?,
        usize::from_str_radix(hi, 16).ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heap_is_anonymous_mappings_covering_its_region_exactly() {
        let base = 0x7f00_0000_0000usize;
        let end = base + HEAP_MAX;
        let heap = format!(
            "5600-5700 r--p 00000000 08:01 12 /usr/bin/x\n\
             {base:x}-{:x} rw-p 00000000 00:00 0 \n\
             {:x}-{end:x} ---p 00000000 00:00 0 \n\
             {end:x}-{:x} r--p 00000000 08:01 13 /lib/y.so\n",
            base + 0x21000,
            base + 0x21000,
            end + 0x1000,
        );
        assert!(is_heap(&heap, base));
        let named = heap.replace("00:00 0 \n", "00:00 0 [anon: glibc: malloc arena]\n");
        assert!(is_heap(&named, base));
        // A file mapping, the brk heap, a gap, or a mapping running past
        // either end: not a heap.
        for not in [
            heap.replace("00:00 0 \n", "08:01 14 /data/z\n"),
            heap.replace("00:00 0 \n", "00:00 0 [heap]\n"),
            heap.replace(
                &format!("{:x}-{end:x}", base + 0x21000),
                &format!("{:x}-{end:x}", base + 0x22000),
            ),
            heap.replace(&format!("{base:x}-"), &format!("{:x}-", base - 0x1000)),
            heap.replace(&format!("-{end:x}"), &format!("-{:x}", end - 0x1000)),
        ] {
            assert!(!is_heap(&not, base), "{not}");
        }
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn a_threads_heap_is_advised() {
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage/enabled").exists() {
            return;
        }
        let advised_thread = std::thread::spawn(|| {
            let done = advise_this_thread();
            let later = vec![0u8; PROBE];
            (done, advised(later.as_ptr() as usize))
        });
        assert_eq!(advised_thread.join().ok(), Some((true, true)));
    }
}
