//! A filter in this process over one ELF file, found in a build-ID tree
//! that holds only it (tests/allocs.rs and benches/allocs.rs count the
//! allocations of such a filter).

use std::path::Path;

use object::Object;
use symfilter::filter::{Dialect, Filter, Options, Wants};
use symfilter::render::Format;
use symfilter::symbols::{Symbolizer, SymbolizerConfig};

/// The build ID of ELF `data`, in hex.
pub fn build_id(data: &[u8]) -> String {
    object::File::parse(data)
        .expect("ELF file")
        .build_id()
        .ok()
        .flatten()
        .expect("a build ID")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A build-ID tree holding only `file`, whose build ID is `build_id`.
pub fn tree(file: &Path, build_id: &str) -> tempfile::TempDir {
    let tree = tempfile::tempdir().expect("temp dir");
    let dir = tree.path().join(".build-id").join(&build_id[..2]);
    std::fs::create_dir_all(&dir).expect("build-id dir");
    std::os::unix::fs::symlink(file, dir.join(format!("{}.debug", &build_id[2..])))
        .expect("symlink");
    tree
}

/// A filter printing `format` (`color` on or off), on one thread, that
/// finds symbols in `tree` only and reports nothing; its inputs are
/// regular files.
pub fn filter(tree: &Path, format: Format, color: bool) -> Filter {
    let config = SymbolizerConfig {
        providers: symfilter::elf::providers(&symfilter::elf::Places {
            build_id_dirs: vec![tree.to_path_buf()],
            symbol_paths: Vec::new(),
            defaults: false,
        }),
    };
    let opts = Options {
        format,
        dialect: Dialect::usual_for(format),
        wants: Wants::usual_for(format),
        color,
        ..Options::default()
    };
    let mut filter = Filter::new(
        opts,
        Symbolizer::new(config),
        std::sync::Arc::new(symfilter::report::Silent),
    );
    filter.set_input_never_blocks(true);
    filter
}
