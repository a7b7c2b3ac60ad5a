//! Contextual elements in the human format: a module's `module` and
//! `mmap` lines summarised as one line once its run of them ends.

use std::io::{self, Write};

use super::Human;
use crate::context::{Module, Region};
use crate::render::{ContextEvent, Line};

pub(super) struct Summary {
    module: Module,
    regions: Vec<Region>,
    /// The lead of the line that started it (see [`Line::lead`]).
    lead: Vec<u8>,
}

impl Human {
    pub(super) fn flush_summary(&mut self, out: &mut dyn Write, crlf: bool) -> io::Result<()> {
        let Some(s) = self.pending.take() else {
            return Ok(());
        };
        let m = &s.module;
        out.write_all(&s.lead)?;
        write!(
            out,
            "[module #{} \"{}\" build-id {}",
            m.id,
            crate::escape::bytes(&m.name),
            m.build_id
        )?;
        let mut regions = s.regions;
        regions.sort_by_key(|r| r.start);
        for (i, r) in regions.iter().enumerate() {
            let sep = if i == 0 { ": " } else { ", " };
            let mode = if r.mode.as_str().is_empty() {
                "-"
            } else {
                r.mode.as_str()
            };
            if r.size == 0 {
                write!(out, "{sep}{:#x} (size 0) {mode}", r.start)?;
            } else {
                write!(out, "{sep}{:#x}-{:#x} {mode}", r.start, r.last())?;
            }
        }
        out.write_all(b"]")?;
        out.write_all(if crlf { b"\r\n" } else { b"\n" })
    }

    pub(super) fn note_context(
        &mut self,
        out: &mut dyn Write,
        ev: &ContextEvent,
        line: &Line<'_>,
    ) -> io::Result<()> {
        let crlf = line.crlf();
        match ev {
            ContextEvent::Module(m) => {
                self.learn_name(m);
                self.flush_summary(out, crlf)?;
                self.pending = Some(Summary {
                    module: m.clone(),
                    regions: Vec::new(),
                    lead: line.lead.to_vec(),
                });
            }
            ContextEvent::Mmap {
                duplicate: true, ..
            } => {}
            ContextEvent::Mmap { module, region, .. } => {
                if self.pending.as_ref().map(|s| s.module.id) != Some(module.id) {
                    self.flush_summary(out, crlf)?;
                    self.pending = Some(Summary {
                        module: module.clone(),
                        regions: Vec::new(),
                        lead: line.lead.to_vec(),
                    });
                }
                if let Some(s) = &mut self.pending {
                    s.regions.push(*region);
                }
            }
            ContextEvent::Reset { had_state } => {
                self.flush_summary(out, crlf)?;
                // A new process: its toolchain roots are stated afresh.
                self.st.stated = Default::default();
                self.short_names.clear();
                self.short_ids.clear();
                if *had_state {
                    out.write_all(line.lead)?;
                    out.write_all(b"[reset]")?;
                    out.write_all(if crlf { b"\r\n" } else { b"\n" })?;
                }
            }
            ContextEvent::Refused => {}
        }
        Ok(())
    }
}
