//! Call stacks: a trie of the call paths seen, per thread (or merged across
//! threads), with call counts, total and self time; printed as an indented
//! tree or as folded stacks (`a;b;c VALUE`) that flamegraph tools read.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::account::seconds;
use super::fdr::{Diagnostic, Event, FnKind, ThreadKey, Trace};
use super::names::Names;
use super::open::OpenStack;

const NO_PARENT: usize = usize::MAX;
/// Folded lines keep at most this many innermost frames (below a
/// `[truncated]` root): pathological recursion would otherwise make the
/// output quadratic in the trace size.
pub const MAX_FOLDED_FRAMES: usize = 1024;
/// The tree indents at most this many levels; deeper lines show `[+DEPTH]`.
const MAX_INDENT: usize = 64;

/// One call path.
#[derive(Clone, Debug)]
pub struct Node {
    pub func: u32,
    pub parent: usize,
    pub children: Vec<usize>,
    pub count: u64,
    pub total: u64,
    pub self_time: u64,
}

#[derive(Clone, Copy, Debug)]
struct Open {
    node: usize,
    entry: u64,
    children: u64,
}

/// The stack trie. Roots are per thread unless threads are aggregated.
#[derive(Default)]
pub struct StackTrie {
    pub nodes: Vec<Node>,
    /// Root nodes, with the thread they belong to (`None` when merged).
    pub roots: Vec<(Option<ThreadKey>, Vec<usize>)>,
    child: HashMap<(usize, u32, usize), usize>,
    open: HashMap<ThreadKey, OpenStack<Open>>,
    root_slot: HashMap<Option<ThreadKey>, usize>,
    aggregate: bool,
    pub unmatched_exits: u64,
    pub unmatched_entries: u64,
    pub diagnostics: Vec<Diagnostic>,
}

impl StackTrie {
    pub fn run(trace: &Trace<'_>, aggregate_threads: bool) -> StackTrie {
        let mut st = StackTrie {
            aggregate: aggregate_threads,
            ..StackTrie::default()
        };
        let mut ends = Vec::new();
        let diags = trace.for_each_event(|t, e| st.event(t, e), |t| ends.push(t));
        for t in ends {
            if let Some(open) = st.open.remove(&t) {
                st.unmatched_entries += open.len() as u64;
            }
        }
        st.diagnostics = diags;
        st
    }

    fn node(&mut self, thread: ThreadKey, parent: usize, func: u32) -> usize {
        let key = if self.aggregate { None } else { Some(thread) };
        let slot = match self.root_slot.get(&key) {
            Some(&s) => s,
            None => {
                self.roots.push((key, Vec::new()));
                self.root_slot.insert(key, self.roots.len() - 1);
                self.roots.len() - 1
            }
        };
        let ckey = (parent, func, if parent == NO_PARENT { slot } else { 0 });
        if let Some(&n) = self.child.get(&ckey) {
            return n;
        }
        let n = self.nodes.len();
        self.nodes.push(Node {
            func,
            parent,
            children: Vec::new(),
            count: 0,
            total: 0,
            self_time: 0,
        });
        self.child.insert(ckey, n);
        if parent == NO_PARENT {
            self.roots[slot].1.push(n);
        } else {
            self.nodes[parent].children.push(n);
        }
        n
    }

    pub fn event(&mut self, t: ThreadKey, e: &Event<'_>) {
        let &Event::Function {
            kind, func_id, tsc, ..
        } = e
        else {
            return;
        };
        match kind {
            FnKind::Entry | FnKind::EntryArgs => {
                let parent = self
                    .open
                    .get(&t)
                    .and_then(|s| s.last())
                    .map_or(NO_PARENT, |o| o.node);
                let node = self.node(t, parent, func_id);
                self.open.entry(t).or_default().push(
                    func_id,
                    Open {
                        node,
                        entry: tsc,
                        children: 0,
                    },
                );
            }
            FnKind::Exit | FnKind::TailExit => {
                let Some(stack) = self.open.get_mut(&t) else {
                    self.unmatched_exits += 1;
                    return;
                };
                let Some(pos) = stack.find(func_id) else {
                    self.unmatched_exits += 1;
                    return;
                };
                // Frames above the match lost their exits; drop them.
                self.unmatched_entries += (stack.len() - pos - 1) as u64;
                while stack.len() > pos + 1 {
                    stack.pop();
                }
                let Some((_, top)) = stack.pop() else { return };
                let d = top.entry.max(tsc) - top.entry.min(tsc);
                if let Some(p) = stack.last_mut() {
                    p.children = p.children.saturating_add(d);
                }
                let n = &mut self.nodes[top.node];
                n.count += 1;
                n.total = n.total.saturating_add(d);
                n.self_time = n.self_time.saturating_add(d.saturating_sub(top.children));
            }
        }
    }

    fn path<'n>(&self, mut n: usize, names: &'n HashMap<u32, String>) -> Vec<&'n str> {
        let mut out = Vec::new();
        while n != NO_PARENT {
            if out.len() == MAX_FOLDED_FRAMES {
                out.push("[truncated]");
                break;
            }
            out.push(names.get(&self.nodes[n].func).map_or("?", String::as_str));
            n = self.nodes[n].parent;
        }
        out.reverse();
        out
    }

    /// Folded stacks, one line per call path with a nonzero value, sorted.
    pub fn write_folded(&self, out: &mut String, value: StackValue, names: &Names) {
        let mut folded: HashMap<u32, String> = HashMap::new();
        for n in &self.nodes {
            folded
                .entry(n.func)
                .or_insert_with(|| folded_name(&names.name(n.func)));
        }
        let names = &folded;
        let mut lines = Vec::new();
        for (thread, roots) in &self.roots {
            let prefix = thread.map(|t| format!("thread_{};", t.tid));
            let mut todo: Vec<usize> = roots.clone();
            while let Some(n) = todo.pop() {
                todo.extend(self.nodes[n].children.iter().copied());
                let node = &self.nodes[n];
                let v = match value {
                    StackValue::SelfTime => node.self_time,
                    StackValue::Total => node.total,
                    StackValue::Count => node.count,
                };
                if v == 0 {
                    continue;
                }
                let mut line = prefix.clone().unwrap_or_default();
                line.push_str(&self.path(n, names).join(";"));
                let _ = write!(line, " {v}");
                lines.push(line);
            }
        }
        lines.sort();
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
    }

    /// An indented tree per thread: count, total and self seconds.
    pub fn write_tree(&self, out: &mut String, freq: u64, names: &Names) {
        for (thread, roots) in &self.roots {
            match thread {
                Some(t) => {
                    let _ = writeln!(out, "Thread {} (process {}):", t.tid, t.pid);
                }
                None => out.push_str("All threads:\n"),
            }
            let _ = writeln!(
                out,
                "{:>10} {:>12} {:>12}  stack",
                "count", "total(s)", "self(s)"
            );
            let mut todo: Vec<(usize, usize)> = self
                .sorted(roots)
                .into_iter()
                .rev()
                .map(|n| (n, 0))
                .collect();
            while let Some((n, depth)) = todo.pop() {
                let node = &self.nodes[n];
                let deep = if depth > MAX_INDENT {
                    format!("[+{depth}] ")
                } else {
                    String::new()
                };
                let _ = writeln!(
                    out,
                    "{:>10} {:>12.6} {:>12.6}  {:indent$}{deep}{}",
                    node.count,
                    seconds(node.total, freq),
                    seconds(node.self_time, freq),
                    "",
                    names.name(node.func),
                    indent = depth.min(MAX_INDENT) * 2
                );
                for c in self.sorted(&node.children).into_iter().rev() {
                    todo.push((c, depth + 1));
                }
            }
        }
    }

    /// Children by total time, largest first.
    fn sorted(&self, list: &[usize]) -> Vec<usize> {
        let mut v = list.to_vec();
        v.sort_by(|&a, &b| {
            self.nodes[b]
                .total
                .cmp(&self.nodes[a].total)
                .then(self.nodes[a].func.cmp(&self.nodes[b].func))
        });
        v
    }
}

/// What the number of a folded line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum StackValue {
    /// Time in the function itself, children excluded (what flamegraph
    /// tools expect), in TSC ticks.
    #[default]
    SelfTime,
    /// Time including children (`llvm-xray stack -all-stacks` flame values).
    Total,
    /// Number of calls.
    Count,
}

fn folded_name(name: &str) -> String {
    name.replace([';', '\n'], "_")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2000-deep recursion: folded lines are capped, the tree indentation
    /// too, and exits that match nothing stay cheap.
    #[test]
    fn deep_recursion_stays_bounded() {
        let t = ThreadKey { pid: 1, tid: 1 };
        let mut st = StackTrie::default();
        let depth = 2000u64;
        for i in 0..depth {
            st.event(
                t,
                &Event::Function {
                    kind: FnKind::Entry,
                    func_id: 1,
                    tsc: i,
                    cpu: 0,
                },
            );
        }
        for i in 0..100_000u64 {
            st.event(
                t,
                &Event::Function {
                    kind: FnKind::Exit,
                    func_id: 2,
                    tsc: depth + i,
                    cpu: 0,
                },
            );
        }
        for i in 0..depth {
            st.event(
                t,
                &Event::Function {
                    kind: FnKind::Exit,
                    func_id: 1,
                    tsc: 200_000 + i,
                    cpu: 0,
                },
            );
        }
        assert_eq!(st.unmatched_exits, 100_000);
        let names = Names::default();
        let mut out = String::new();
        st.write_folded(&mut out, StackValue::Count, &names);
        assert_eq!(out.lines().count(), depth as usize);
        let longest = out.lines().map(|l| l.matches(';').count()).max();
        assert_eq!(longest, Some(MAX_FOLDED_FRAMES + 1));
        assert!(out.contains("thread_1;[truncated];#1;"));
        let mut tree = String::new();
        st.write_tree(&mut tree, 0, &names);
        assert!(tree.lines().all(|l| l.len() < 200));
        assert!(tree.contains("[+1999] #1"));
    }
}
