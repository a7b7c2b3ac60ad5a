//! Options that say where symbols come from, shared by the filter, `lookup`
//! and `xray`.

use std::path::PathBuf;

use clap::Args;

use symfilter::debuginfod;
use symfilter::symbols::{Provider, Symbolizer, SymbolizerConfig};

#[derive(Args, Debug, Clone, Default)]
pub struct SourceArgs {
    /// Debug-file tree searched by build ID (DIR/.build-id/ab/cdef...debug);
    /// repeatable, searched in order, before /usr/lib/debug.
    #[arg(
        long = "build-id-dir",
        visible_alias = "debug-file-directory",
        value_name = "DIR"
    )]
    pub build_id_dirs: Vec<PathBuf>,
    /// ELF file, or folder scanned recursively for ELF files, indexed by
    /// build ID (for example a build output tree); repeatable.
    #[arg(long = "symbol-path", value_name = "PATH")]
    pub symbol_paths: Vec<PathBuf>,
    /// Breakpad symbol store (<debug_file>/<DEBUG_ID>/<debug_file>.sym); repeatable.
    #[arg(long = "breakpad-store", value_name = "DIR")]
    pub breakpad_stores: Vec<PathBuf>,
    /// GSYM file, or folder of GSYM files matched to modules by UUID; repeatable.
    #[arg(long = "gsym", value_name = "PATH")]
    pub gsym_paths: Vec<PathBuf>,
    /// debuginfod server URL, tried after DEBUGINFOD_URLS' servers; repeatable.
    #[arg(long = "debuginfod", value_name = "URL")]
    pub debuginfod_urls: Vec<String>,
    /// Never ask debuginfod servers.
    #[arg(long = "no-debuginfod")]
    pub no_debuginfod: bool,
    /// Seconds all debuginfod downloads of the run may take together
    /// (wall time from the first request); then servers are no longer
    /// asked. Default 600. Each download also ends after DEBUGINFOD_MAXTIME
    /// seconds (default 300).
    #[arg(
        long = "debuginfod-timeout",
        value_name = "SECS",
        env = "SYMFILTER_DEBUGINFOD_TIMEOUT"
    )]
    pub debuginfod_timeout: Option<u64>,
    /// Use no network at all (debuginfod cache only).
    #[arg(long)]
    pub offline: bool,
    /// Look only where the options say: not at the files the log's
    /// {{{module}}} lines name, nor in /usr/lib/debug.
    #[arg(long = "no-default-paths")]
    pub no_default_paths: bool,
    /// Set by the command (`-q`): sources report no warnings or progress.
    #[arg(skip)]
    pub quiet: bool,
}

impl SourceArgs {
    /// Where the ELF sources look.
    pub fn places(&self) -> symfilter::elf::Places {
        symfilter::elf::Places {
            build_id_dirs: self.build_id_dirs.clone(),
            symbol_paths: self.symbol_paths.clone(),
            defaults: !self.no_default_paths,
        }
    }

    /// Build the symbolizer front: the places the user named, then the
    /// files the log names and the system's debug directory, then the
    /// network.
    pub fn symbolizer(&self) -> anyhow::Result<Symbolizer> {
        if !self.quiet {
            self.warn_of_missing_places();
        }
        let places = self.places();
        let mut config = SymbolizerConfig::default();
        config.providers.extend(symfilter::elf::providers(&places));
        config
            .providers
            .extend(symfilter::breakpad::providers(&self.breakpad_stores));
        config
            .providers
            .extend(symfilter::gsym::providers(&self.gsym_paths));
        config
            .providers
            .extend(symfilter::elf::default_providers(&places));
        config.providers.extend(self.debuginfod());
        Ok(Symbolizer::new(config))
    }

    /// Say which of the places the options name cannot be looked in (most
    /// often a mistyped path): one line each. They are still searched, in
    /// case they appear while the log is read.
    fn warn_of_missing_places(&self) {
        // (option, its paths, whether each must be a folder)
        let places = [
            ("--build-id-dir", &self.build_id_dirs, true),
            ("--breakpad-store", &self.breakpad_stores, true),
            ("--symbol-path", &self.symbol_paths, false),
            ("--gsym", &self.gsym_paths, false),
        ];
        for (option, paths, must_be_dir) in places {
            for path in paths {
                let problem = match std::fs::metadata(path) {
                    Err(e) => e.to_string(),
                    Ok(m) if must_be_dir && !m.is_dir() => "not a directory".to_string(),
                    Ok(_) => continue,
                };
                eprintln!("symfilter: warning: {option} {}: {problem}", path.display());
            }
        }
    }

    /// The debuginfod provider, unless `--no-debuginfod` or nothing to ask.
    fn debuginfod(&self) -> Vec<Box<dyn Provider>> {
        if self.no_debuginfod {
            return Vec::new();
        }
        let settings = debuginfod::Settings {
            urls: self.debuginfod_urls.clone(),
            offline: self.offline,
            budget_secs: self.debuginfod_timeout,
        };
        let env = |name: &str| std::env::var(name).ok();
        match debuginfod::Config::resolve(&settings, &env) {
            Some(config) => debuginfod::providers(
                config,
                self.places().debug_dirs(),
                super::report::Stderr::new(self.quiet),
            ),
            None => Vec::new(),
        }
    }
}
