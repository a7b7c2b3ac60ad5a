//! The integration tests: one crate, one module per area. Every run of the
//! binary goes through [`common::command`], which isolates its environment.

mod common;

mod breakpad_diff;
mod breakpad_filter;
mod breakpad_old_forms;
mod breakpad_props;
mod breakpad_store;
mod crash_frames;
mod debuginfod;
mod debuginfod_faults;
mod default_places;
mod demangle;
mod demux;
mod dumpfile;
mod elf_lookup;
mod filter;
mod filter_render;
mod gsym;
mod gsym_old_forms;
mod gsym_provider;
mod gsym_roundtrip;
mod hostile;
mod human_paths;
mod llvm_diff;
mod lookup_cli;
mod truncated_files;
mod two_threads;
mod xray_hand;
mod xray_real;
