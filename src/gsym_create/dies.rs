//! The DIEs a DWARF-to-GSYM conversion reads, one unit at a time, and the
//! names LLVM's `DwarfTransformer` gives them.
//!
//! A DIE's name can live in another unit: `DW_AT_abstract_origin` and
//! `DW_AT_specification` with `DW_FORM_ref_addr` point anywhere in
//! `.debug_info`, as rustc's cross-unit inlining (ThinLTO) and LTO builds
//! of C and C++ do. [`Others`] parses such a unit the first time a reference
//! points into it and keeps it for the rest of the conversion.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use gimli::{AttributeValue, DwAt, DwTag, EndianSlice, RunTimeEndian, constants};

pub(super) type R<'a> = EndianSlice<'a, RunTimeEndian>;

/// A kept DIE.
pub(super) struct Node<'a> {
    pub tag: DwTag,
    /// Direct parent, when the parent is itself a kept node.
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    pub attrs: Vec<gimli::Attribute<R<'a>>>,
}

const KEPT: [DwTag; 7] = [
    constants::DW_TAG_subprogram,
    constants::DW_TAG_inlined_subroutine,
    constants::DW_TAG_lexical_block,
    constants::DW_TAG_namespace,
    constants::DW_TAG_structure_type,
    constants::DW_TAG_class_type,
    constants::DW_TAG_union_type,
];

/// The attributes the conversion reads; the others are not kept.
const USED_ATTRS: [DwAt; 13] = [
    constants::DW_AT_name,
    constants::DW_AT_linkage_name,
    constants::DW_AT_MIPS_linkage_name,
    constants::DW_AT_abstract_origin,
    constants::DW_AT_specification,
    constants::DW_AT_low_pc,
    constants::DW_AT_high_pc,
    constants::DW_AT_ranges,
    constants::DW_AT_call_file,
    constants::DW_AT_call_line,
    constants::DW_AT_decl_file,
    constants::DW_AT_decl_line,
    constants::DW_AT_language,
];

/// One unit's kept DIEs, in DFS (offset) order.
pub(super) struct Tree<'a> {
    pub unit: gimli::Unit<R<'a>>,
    pub nodes: Vec<Node<'a>>,
    by_offset: HashMap<usize, usize>,
    /// The unit DIE's `DW_AT_language` (0 when absent).
    pub language: u16,
}

impl<'a> Tree<'a> {
    /// Reads the unit's DIEs. A unit that fails half way keeps what was read.
    pub fn build(unit: gimli::Unit<R<'a>>) -> (Tree<'a>, Result<(), gimli::Error>) {
        let mut tree = Tree {
            unit,
            nodes: Vec::new(),
            by_offset: HashMap::new(),
            language: 0,
        };
        let result = tree.read();
        (tree, result)
    }

    fn read(&mut self) -> Result<(), gimli::Error> {
        // Stack of (depth, kept node index) of the current DIE's ancestors.
        let mut stack: Vec<(isize, Option<usize>)> = Vec::new();
        let mut cursor = self.unit.entries();
        while let Some(entry) = cursor.next_dfs()? {
            let depth = entry.depth();
            while stack.last().is_some_and(|&(d, _)| d >= depth) {
                stack.pop();
            }
            if depth == 0
                && let Some(AttributeValue::Language(l)) =
                    entry.attr_value(constants::DW_AT_language)
            {
                self.language = l.0;
            }
            let tag = entry.tag();
            let kept = if KEPT.contains(&tag) {
                let parent = stack.last().and_then(|&(_, p)| p);
                let idx = self.nodes.len();
                self.nodes.push(Node {
                    tag,
                    parent,
                    children: Vec::new(),
                    attrs: entry
                        .attrs()
                        .iter()
                        .filter(|a| USED_ATTRS.contains(&a.name()))
                        .cloned()
                        .collect(),
                });
                if let Some(p) = parent {
                    self.nodes[p].children.push(idx);
                }
                self.by_offset.insert(entry.offset().0, idx);
                Some(idx)
            } else {
                None
            };
            if entry.has_children() {
                stack.push((depth, kept));
            }
        }
        Ok(())
    }

    pub fn attr(&self, node: usize, at: DwAt) -> Option<AttributeValue<R<'a>>> {
        self.nodes
            .get(node)?
            .attrs
            .iter()
            .find(|a| a.name() == at)
            .map(|a| a.value())
    }
}

/// The units of a `.debug_info` other than the one being converted, parsed
/// on first reference.
pub(super) struct Others<'d, 'a> {
    dwarf: &'d gimli::Dwarf<R<'a>>,
    /// Start offsets of every unit, ascending.
    starts: Vec<usize>,
    arena: &'d typed_arena::Arena<Tree<'a>>,
    parsed: RefCell<HashMap<usize, Option<&'d Tree<'a>>>>,
}

impl<'d, 'a> Others<'d, 'a> {
    pub fn new(dwarf: &'d gimli::Dwarf<R<'a>>, arena: &'d typed_arena::Arena<Tree<'a>>) -> Self {
        let mut starts = Vec::new();
        let mut units = dwarf.units();
        while let Ok(Some(h)) = units.next() {
            // `units()` walks `.debug_info`.
            starts.push(h.offset().0);
        }
        Others {
            dwarf,
            starts,
            arena,
            parsed: RefCell::new(HashMap::new()),
        }
    }

    /// The tree of the unit holding `.debug_info` offset `at`.
    fn tree_at(&self, at: usize) -> Option<&'d Tree<'a>> {
        let i = self.starts.partition_point(|&s| s <= at).checked_sub(1)?;
        let start = self.starts[i];
        if let Some(&t) = self.parsed.borrow().get(&start) {
            return t;
        }
        let tree = self
            .dwarf
            .debug_info
            .header_from_offset(gimli::DebugInfoOffset(start))
            .and_then(|h| self.dwarf.unit(h))
            .ok()
            .map(|unit| &*self.arena.alloc(Tree::build(unit).0));
        self.parsed.borrow_mut().insert(start, tree);
        tree
    }
}

/// A DIE: its unit's tree and its index there.
pub(super) type Loc<'t, 'a> = (&'t Tree<'a>, usize);

/// Name lookups over the unit being converted and, through references,
/// the others.
pub(super) struct Dies<'t, 'd, 'a> {
    pub dwarf: &'t gimli::Dwarf<R<'a>>,
    pub here: &'t Tree<'a>,
    pub others: Option<&'t Others<'d, 'a>>,
}

/// Languages whose names LLVM qualifies with their declaration contexts.
const C_LIKE: [u16; 6] = [
    constants::DW_LANG_C_plus_plus.0,
    constants::DW_LANG_C_plus_plus_03.0,
    constants::DW_LANG_C_plus_plus_11.0,
    constants::DW_LANG_C_plus_plus_14.0,
    constants::DW_LANG_ObjC_plus_plus.0,
    constants::DW_LANG_C.0,
];

impl<'t, 'd: 't, 'a> Dies<'t, 'd, 'a> {
    /// The DIE a reference attribute of a DIE in `from` points to.
    fn node_ref(&self, from: &'t Tree<'a>, v: AttributeValue<R<'a>>) -> Option<Loc<'t, 'a>> {
        let (tree, off) = match v {
            AttributeValue::UnitRef(o) => (from, o.0),
            AttributeValue::DebugInfoRef(o) => match o.to_unit_offset(&from.unit.header) {
                Some(u) => (from, u.0),
                None => {
                    let other: &'t Tree<'a> = if std::ptr::eq(from, self.here) {
                        self.others?.tree_at(o.0)?
                    } else {
                        match o.to_unit_offset(&self.here.unit.header) {
                            Some(_) => self.here,
                            None => self.others?.tree_at(o.0)?,
                        }
                    };
                    (other, o.to_unit_offset(&other.unit.header)?.0)
                }
            },
            _ => return None,
        };
        Some((tree, *tree.by_offset.get(&off)?))
    }

    /// LLVM's `findRecursively`: the attribute on the DIE or on what its
    /// abstract origin / specification chain points to, with the DIE that
    /// has it.
    pub fn find_recursively(
        &self,
        node: Loc<'t, 'a>,
        names: &[DwAt],
    ) -> Option<(Loc<'t, 'a>, AttributeValue<R<'a>>)> {
        let mut work = vec![node];
        let mut seen = HashSet::new();
        while let Some(n) = work.pop() {
            if !seen.insert((std::ptr::from_ref(n.0), n.1)) || seen.len() > 64 {
                continue;
            }
            for &at in names {
                if let Some(v) = n.0.attr(n.1, at) {
                    return Some((n, v));
                }
            }
            for at in [
                constants::DW_AT_abstract_origin,
                constants::DW_AT_specification,
            ] {
                if let Some(r) = n.0.attr(n.1, at).and_then(|v| self.node_ref(n.0, v)) {
                    work.insert(0, r);
                }
            }
        }
        None
    }

    /// A string attribute of a DIE in `tree`.
    fn string(&self, tree: &Tree<'a>, v: AttributeValue<R<'a>>) -> Option<&'a [u8]> {
        self.dwarf
            .attr_string(&tree.unit, v)
            .ok()
            .map(|s| s.slice())
    }

    fn short_name(&self, node: Loc<'t, 'a>) -> Option<&'a [u8]> {
        self.find_recursively(node, &[constants::DW_AT_name])
            .and_then(|(at, v)| self.string(at.0, v))
            .filter(|s| !s.is_empty())
    }

    fn parent_decl_context(&self, node: Loc<'t, 'a>, depth: u32) -> Option<Loc<'t, 'a>> {
        if depth > 64 {
            return None;
        }
        let (tree, i) = node;
        for at in [
            constants::DW_AT_specification,
            constants::DW_AT_abstract_origin,
        ] {
            if let Some(r) = tree.attr(i, at).and_then(|v| self.node_ref(tree, v))
                && let Some(p) = self.parent_decl_context(r, depth + 1)
            {
                return Some(p);
            }
        }
        if tree.nodes.get(i)?.tag == constants::DW_TAG_inlined_subroutine {
            return None;
        }
        let parent = tree.nodes.get(i)?.parent?;
        match tree.nodes[parent].tag {
            constants::DW_TAG_namespace
            | constants::DW_TAG_structure_type
            | constants::DW_TAG_union_type
            | constants::DW_TAG_class_type
            | constants::DW_TAG_subprogram => Some((tree, parent)),
            constants::DW_TAG_lexical_block => self.parent_decl_context((tree, parent), depth + 1),
            _ => None,
        }
    }

    /// LLVM's `getQualifiedNameIndex`: the linkage name, else the short
    /// name, qualified with its declaration contexts for C and C++ (the
    /// language of the unit being converted decides, as in LLVM).
    pub fn qualified_name(&self, node: usize) -> Option<Cow<'a, [u8]>> {
        let node = (self.here, node);
        if let Some(linkage) = self
            .find_recursively(
                node,
                &[
                    constants::DW_AT_MIPS_linkage_name,
                    constants::DW_AT_linkage_name,
                ],
            )
            .and_then(|(at, v)| self.string(at.0, v))
        {
            return Some(Cow::Borrowed(linkage));
        }
        let short = self.short_name(node)?;
        if !C_LIKE.contains(&self.here.language) {
            return Some(Cow::Borrowed(short));
        }
        let gcc_clone = |s: &[u8]| {
            s.starts_with(b"_Z")
                && (memchr::memmem::find(s, b".isra.").is_some()
                    || memchr::memmem::find(s, b".part.").is_some())
        };
        if gcc_clone(short) {
            return Some(Cow::Borrowed(short));
        }
        let mut ctx = self.parent_decl_context(node, 0);
        if ctx.is_none() {
            return Some(Cow::Borrowed(short));
        }
        let mut name = short.to_vec();
        let mut steps = 0;
        while let Some(p) = ctx {
            steps += 1;
            if steps > 256 {
                break;
            }
            if let Some(pn) = self.short_name(p) {
                let mut full = Vec::with_capacity(pn.len() + 2 + name.len());
                if pn.len() >= 2 && pn[0] == b'<' && pn[pn.len() - 1] == b'>' {
                    full.push(b'{');
                    full.extend_from_slice(&pn[1..pn.len() - 1]);
                    full.push(b'}');
                } else {
                    full.extend_from_slice(pn);
                }
                full.extend_from_slice(b"::");
                full.extend_from_slice(&name);
                name = full;
            }
            ctx = self.parent_decl_context(p, 0);
        }
        Some(Cow::Owned(name))
    }
}
