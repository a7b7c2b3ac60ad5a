//! The main thread's heap (glibc's `brk` heap) is advised to use huge
//! pages, and what the main thread allocates afterwards lands in it. Runs
//! on the main thread (no test harness): the harness's test threads have
//! arenas of their own.

use symfilter::base::heap;

fn main() {
    if !cfg!(all(target_os = "linux", target_env = "gnu"))
        || !std::path::Path::new("/sys/kernel/mm/transparent_hugepage/enabled").exists()
    {
        println!("main_heap: skipped (no glibc or no transparent huge pages)");
        return;
    }
    heap::readable_heaps();
    // As in the program, the heap has grown (by the pad) before the advice.
    drop(vec![0u8; 100 << 10]);
    assert!(
        heap::advise_main_heap(),
        "the main thread's heap was not advised"
    );
    // Blocks from the heap (below the mmap threshold), allocated after the
    // advice: the first few MiB stay in small pages, what lies beyond is
    // advised.
    let blocks: Vec<Vec<u8>> = (0..256).map(|_| vec![1u8; 64 << 10]).collect();
    let (first, last) = (blocks[0].as_ptr() as usize, blocks[255].as_ptr() as usize);
    assert!(
        last >= first + (8 << 20),
        "the blocks do not follow each other in the heap"
    );
    assert!(
        !heap::advised(first),
        "the heap's first MiBs past its use were advised"
    );
    assert!(
        heap::advised(last),
        "a block beyond the heap's first MiBs is outside the advised heap"
    );
    // Another thread's arena is not the main heap: its blocks do not move
    // the program break, and nothing is advised there.
    let other = std::thread::spawn(heap::advise_main_heap).join();
    assert_eq!(other.ok(), Some(false));
    println!("main_heap: ok");
}
