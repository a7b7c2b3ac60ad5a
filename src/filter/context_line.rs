//! LLVM's order within a line that holds a contextual element (see
//! [`Dialect::context_first`](super::Dialect)): LLVM declares the line's
//! `module` or `mmap` before it shows the elements before it, and shows
//! (and looks up, and diagnoses) those only when the element begins a new
//! `[[[ELF module` line. A `reset` comes after them: they see the context
//! it ends.

use std::io::Write;

use super::Filter;
use crate::markup::Node;
use crate::render::{ContextEvent, Event};

/// A line's first contextual element, when applied ahead of the elements
/// before it.
pub(super) struct First<'a> {
    /// Its index among the line's nodes.
    pub at: usize,
    /// Its event, until the line's loop reaches it.
    pub event: Option<Event<'a>>,
    /// Whether LLVM never shows the elements before it: nothing is said
    /// of them.
    pub quiet_before: bool,
}

impl Filter {
    /// The line's first contextual element among `nodes`, applied now when
    /// it is a `module` or an `mmap`; for a `reset`, whether the elements
    /// before it go unshown (with nothing to reset, LLVM drops the line).
    pub(super) fn context_first<'a>(
        &mut self,
        bytes: &'a [u8],
        number: u64,
        nodes: &'a [Node],
        out: &mut dyn Write,
    ) -> Option<First<'a>> {
        let (at, raw) = nodes.iter().enumerate().find_map(|(i, node)| match node {
            Node::Element(raw) if super::is_contextual(raw.tag(bytes)) => Some((i, raw)),
            _ => None,
        })?;
        if raw.tag(bytes) == b"reset" {
            return Some(First {
                at,
                event: None,
                quiet_before: self.context.is_empty(),
            });
        }
        let event = self.element(bytes, number, raw, out);
        let quiet_before = match &event {
            Event::Context(_, ContextEvent::Refused) => true,
            Event::Context(_, ContextEvent::Mmap { module, .. }) => {
                self.module_line == Some(module.id)
            }
            _ => false,
        };
        Some(First {
            at,
            event: Some(event),
            quiet_before,
        })
    }

    /// After a line's events: the module whose line LLVM holds open. A
    /// line without a contextual element ends it, a refused one leaves it.
    pub(super) fn note_module_line(&mut self, events: &[Event<'_>]) {
        let Some(Event::Context(_, ce)) = events.iter().find(|e| matches!(e, Event::Context(..)))
        else {
            self.module_line = None;
            return;
        };
        match ce {
            ContextEvent::Refused => {}
            ContextEvent::Reset { had_state } => {
                if *had_state {
                    self.module_line = None;
                }
            }
            ContextEvent::Module(m) => self.module_line = Some(m.id),
            ContextEvent::Mmap { module, .. } => self.module_line = Some(module.id),
        }
    }
}
