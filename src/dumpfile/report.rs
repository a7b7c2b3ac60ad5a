//! What handling a `{{{dumpfile}}}` element gave, as a typed report the
//! printers print (the human format as lines after the element's line,
//! JSON as the element's `"dumpfile"` member), and its JSON vocabulary,
//! shared by the JSON printer and the `--dumpfile-report` file.

use serde_json::{Value, json};

use super::DumpError;
use super::sancov::{Coverage, coverage_json};
use crate::context::{Context, Module, Region};
use crate::xray::{self, account};

/// Most modules in a context description (hostile logs declare up to
/// 65536 per reset).
const MAX_DESCRIBED_MODULES: usize = 4096;
/// Most regions in a context description (all modules together; a reset
/// allows a million).
const MAX_DESCRIBED_REGIONS: usize = 65536;

/// One dump, for the printer.
#[derive(Debug)]
pub struct DumpReport {
    pub kind: Vec<u8>,
    pub name: Vec<u8>,
    /// The module context the dump's addresses mean, when the printer
    /// shows it (the human format shows none for an XRay dump).
    pub context: Option<ContextShown>,
    pub content: Content,
}

/// The context of a dump as a printer shows it.
#[derive(Debug)]
pub struct ContextShown {
    /// Contexts are numbered from 1 in the order dumps meet them (a
    /// context changes with every `reset`, `module` and `mmap`).
    pub number: u64,
    pub empty: bool,
    /// The modules, the first time this context is shown; later dumps of
    /// the same context refer to it by number.
    pub described: Option<Described>,
}

/// A context's modules by ID, at most 4096 modules
/// and 65536 regions in all.
#[derive(Debug, Default)]
pub struct Described {
    pub modules: Vec<DescribedModule>,
    /// Modules past the most described.
    pub modules_omitted: usize,
}

#[derive(Debug)]
pub struct DescribedModule {
    pub module: Module,
    pub regions: Vec<Region>,
    /// This module's regions past the most described.
    pub regions_omitted: usize,
}

/// What was read of the dump file.
#[derive(Debug)]
pub enum Content {
    /// A kind of which nothing is read: the context is the report.
    Context,
    Sancov(Result<Coverage, DumpError>),
    /// The top rows by total time.
    Xray(Result<xray::Summary, DumpError>),
}

impl Described {
    pub fn of(context: &Context) -> Described {
        let mut mods: Vec<&Module> = context.modules().collect();
        mods.sort_by_key(|m| m.id);
        let modules_omitted = mods.len().saturating_sub(MAX_DESCRIBED_MODULES);
        let mut room = MAX_DESCRIBED_REGIONS;
        let modules = mods
            .into_iter()
            .take(MAX_DESCRIBED_MODULES)
            .map(|m| {
                let mut all = context.regions_of(m.id);
                let regions: Vec<Region> = all.by_ref().take(room).copied().collect();
                room -= regions.len();
                DescribedModule {
                    module: m.clone(),
                    regions,
                    regions_omitted: all.count(),
                }
            })
            .collect();
        Described {
            modules,
            modules_omitted,
        }
    }

    /// Every module, described or not.
    pub fn total_modules(&self) -> usize {
        self.modules.len() + self.modules_omitted
    }

    fn json(&self, v: &mut Value) {
        let modules: Vec<Value> = self
            .modules
            .iter()
            .map(|d| {
                let regions: Vec<Value> = d
                    .regions
                    .iter()
                    .map(|r| {
                        json!({
                            "start": format!("{:#x}", r.start),
                            "size": format!("{:#x}", r.size),
                            "mode": r.mode.as_str(),
                            "rel": format!("{:#x}", r.rel),
                        })
                    })
                    .collect();
                json!({
                    "id": d.module.id,
                    "name": d.module.name_lossy(),
                    "build_id": d.module.build_id.to_hex(),
                    "regions": regions,
                })
            })
            .collect();
        v["modules"] = Value::Array(modules);
        if self.modules_omitted > 0 {
            v["modules_omitted"] = self.modules_omitted.into();
        }
        let regions_omitted: usize = self.modules.iter().map(|d| d.regions_omitted).sum();
        if regions_omitted > 0 {
            v["regions_omitted"] = regions_omitted.into();
        }
    }
}

impl DumpReport {
    /// The `"dumpfile"` member of the element in `--format=json`: kind,
    /// name, context number (and modules, the first time), and what was
    /// read: `"sancov"` (`null` when unread), `"xray"` (threads, functions,
    /// top rows), or `"error"`.
    pub fn json(&self) -> Value {
        let mut v = self.json_head(self.context.as_ref());
        match &self.content {
            Content::Context => {}
            Content::Sancov(cov) => {
                v["sancov"] = cov.as_ref().map_or(Value::Null, coverage_json);
                if let Err(e) = cov {
                    v["error"] = e.to_string().into();
                }
            }
            Content::Xray(Ok(s)) => {
                v["xray"] = json!({
                    "threads": s.threads,
                    "functions": s.functions,
                    "top": account::json_rows(&s.rows, s.freq, &s.names),
                });
            }
            Content::Xray(Err(e)) => v["error"] = e.to_string().into(),
        }
        v
    }

    /// The record of a dump other than XRay in the `--dumpfile-report`
    /// file: [`Self::json`] without `"error"`, with the context as the
    /// file shows it and where the element was.
    pub(super) fn record(&self, context: &ContextShown, input: &str, line: u64) -> Value {
        let mut v = self.json_head(Some(context));
        if let Content::Sancov(cov) = &self.content {
            v["sancov"] = cov.as_ref().map_or(Value::Null, coverage_json);
        }
        v["input"] = input.into();
        v["line"] = line.into();
        v
    }

    fn json_head(&self, context: Option<&ContextShown>) -> Value {
        let mut v = json!({
            "kind": String::from_utf8_lossy(&self.kind),
            "name": String::from_utf8_lossy(&self.name),
        });
        if let Some(c) = context {
            v["context"] = c.number.into();
            if let Some(d) = &c.described {
                d.json(&mut v);
            }
        }
        v
    }
}
