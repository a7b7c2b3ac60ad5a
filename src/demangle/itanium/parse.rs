//! Parse an Itanium C++ ABI mangled name into a syntax tree.
//!
//! Written from the Itanium C++ ABI's mangling grammar. Where the grammar
//! leaves a choice (which entities are substitution candidates, which
//! template arguments a `T_` refers to, vendor extensions), the choices
//! follow LLVM's demangler (Apache-2.0 WITH LLVM-exception), so that the
//! output is the one LLVM's tools print.
//!
//! Every way in is bounded: recursion depth and node count are limited, and
//! a name that exceeds them is "not demangled".

use super::ast::*;

/// Deepest recursion allowed while parsing.
const MAX_DEPTH: u32 = 192;
/// Most nodes one name may make.
const MAX_NODES: usize = 1 << 20;

/// What a `<name>` tells its `<encoding>`.
#[derive(Default)]
struct NameState {
    ctor_dtor_conversion: bool,
    ends_with_template_args: bool,
    cv: u8,
    ref_qual: u8,
    forward_refs_begin: usize,
    explicit_object: bool,
}

/// A list of template arguments that `T_` refers to.
#[derive(Clone)]
enum Level {
    Outer,
    List(Vec<Id>),
    Null,
}

pub(super) struct Parser<'a> {
    src: &'a str,
    pos: usize,
    pub(super) nodes: Vec<Node<'a>>,
    pub(super) caches: Vec<[Cache; 3]>,
    subs: Vec<Id>,
    outer: Vec<Id>,
    levels: Vec<Level>,
    forward_refs: Vec<Id>,
    try_template_args: bool,
    permit_forward_refs: bool,
    incomplete_tracking: bool,
    lambda_level: usize,
    synthetic: [u32; 3],
    depth: u32,
}

type R = Option<Id>;

/// A parser's tables, empty, kept for the next name: a log's names are
/// demangled one after another, and a name's tables cost more to grow
/// than to clear.
#[derive(Default)]
pub(super) struct Tables {
    nodes: Vec<Node<'static>>,
    caches: Vec<[Cache; 3]>,
    subs: Vec<Id>,
    outer: Vec<Id>,
    levels: Vec<Level>,
    forward_refs: Vec<Id>,
}

/// Nodes kept at most in [`Tables`]: a hostile name's tables are let go.
const KEEP_NODES: usize = 1 << 12;

impl<'a> Parser<'a> {
    /// A parser of `src` in the tables of an earlier one.
    pub(super) fn reusing(src: &'a str, tables: Tables) -> Parser<'a> {
        let Tables {
            nodes,
            mut caches,
            mut subs,
            mut outer,
            mut levels,
            mut forward_refs,
        } = tables;
        caches.clear();
        subs.clear();
        outer.clear();
        levels.clear();
        forward_refs.clear();
        let mut nodes = crate::base::recycle(nodes);
        nodes.reserve(64);
        caches.reserve(64);
        Parser {
            src,
            pos: 0,
            nodes,
            caches,
            subs,
            outer,
            levels,
            forward_refs,
            try_template_args: true,
            permit_forward_refs: false,
            incomplete_tracking: false,
            lambda_level: usize::MAX,
            synthetic: [0; 3],
            depth: 0,
        }
    }

    /// The tables, emptied, for the next parser (fresh ones after a name
    /// that grew them past [`KEEP_NODES`]).
    pub(super) fn into_tables(self) -> Tables {
        if self.nodes.capacity() > KEEP_NODES {
            return Tables::default();
        }
        let mut tables = Tables {
            nodes: crate::base::recycle(self.nodes),
            caches: self.caches,
            subs: self.subs,
            outer: self.outer,
            levels: self.levels,
            forward_refs: self.forward_refs,
        };
        tables.caches.clear();
        tables.subs.clear();
        tables.outer.clear();
        tables.levels.clear();
        tables.forward_refs.clear();
        tables
    }

    // ---- low-level helpers -------------------------------------------

    fn look(&self, ahead: usize) -> u8 {
        self.src
            .as_bytes()
            .get(self.pos + ahead)
            .copied()
            .unwrap_or(0)
    }

    fn left(&self) -> usize {
        self.src.len() - self.pos
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.look(0) == c && self.left() > 0 {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_str(&mut self, s: &str) -> bool {
        if self.src.as_bytes()[self.pos..].starts_with(s.as_bytes()) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn text(&self, from: usize) -> &'a str {
        // Only ASCII is ever consumed by the grammar's own tokens, and
        // identifiers are cut at byte lengths the mangling gives; a cut
        // inside a UTF-8 sequence fails instead of panicking.
        self.src.get(from..self.pos).unwrap_or("")
    }

    fn make(&mut self, node: Node<'a>) -> R {
        if self.nodes.len() >= MAX_NODES {
            return None;
        }
        let cache = self.cache_of(&node);
        self.nodes.push(node);
        self.caches.push(cache);
        Some((self.nodes.len() - 1) as Id)
    }

    fn text_node(&mut self, s: &'a str) -> R {
        self.make(Node::Name(s))
    }

    fn cache(&self, id: Id) -> [Cache; 3] {
        self.caches[id as usize]
    }

    /// [rhs, array, function] as known when the node is made.
    fn cache_of(&self, node: &Node<'a>) -> [Cache; 3] {
        use Cache::*;
        match *node {
            Node::Qualified(c, _) | Node::AbiTag(c, _) => self.cache(c),
            Node::Pointer(c) | Node::Reference(c, _) => [self.cache(c)[0], No, No],
            Node::MemberPointer(_, m) => [self.cache(m)[0], No, No],
            Node::Array(..) => [Yes, Yes, No],
            Node::Function { .. } | Node::Encoding { .. } => [Yes, No, Yes],
            Node::TypeParamDecl(_)
            | Node::ConstrainedParamDecl(..)
            | Node::NonTypeParamDecl(..)
            | Node::TemplateParamDecl(..)
            | Node::ParamPackDecl(_) => [Yes, No, No],
            Node::ForwardRef { .. } => [Unknown, Unknown, Unknown],
            Node::Pack(ref items) => {
                let mut c = [Unknown; 3];
                for (k, slot) in c.iter_mut().enumerate() {
                    if items.iter().all(|&i| self.cache(i)[k] == No) {
                        *slot = No;
                    }
                }
                c
            }
            _ => [No, No, No],
        }
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn number(&mut self, negative: bool) -> Option<&'a str> {
        let start = self.pos;
        if negative {
            self.eat(b'n');
        }
        // As in LLVM, an `n` without digits stays consumed.
        if !self.look(0).is_ascii_digit() {
            return None;
        }
        while self.look(0).is_ascii_digit() {
            self.pos += 1;
        }
        Some(self.text(start))
    }

    /// A number, or "" when there is none (the parser moves on either way).
    fn opt_number(&mut self, negative: bool) -> &'a str {
        self.number(negative).unwrap_or("")
    }

    fn positive(&mut self) -> Option<usize> {
        if !self.look(0).is_ascii_digit() {
            return None;
        }
        let mut n: usize = 0;
        while self.look(0).is_ascii_digit() {
            n = n
                .checked_mul(10)?
                .checked_add((self.look(0) - b'0') as usize)?;
            self.pos += 1;
        }
        Some(n)
    }

    fn bare_source_name(&mut self) -> Option<&'a str> {
        let len = self.positive()?;
        if len == 0 || self.left() < len {
            return None;
        }
        let start = self.pos;
        self.pos += len;
        let s = self.src.get(start..self.pos)?;
        Some(s)
    }

    fn cv_qualifiers(&mut self) -> u8 {
        let mut q = 0;
        if self.eat(b'r') {
            q |= RESTRICT;
        }
        if self.eat(b'V') {
            q |= VOLATILE;
        }
        if self.eat(b'K') {
            q |= CONST;
        }
        q
    }

    // ---- top level ---------------------------------------------------

    /// The whole mangled name (after its `_Z` prefix has been checked).
    pub(super) fn parse(&mut self) -> R {
        if self.eat_str("_Z") || self.eat_str("__Z") {
            let mut enc = self.encoding()?;
            if self.look(0) == b'.' {
                let suffix = &self.src[self.pos..];
                self.pos = self.src.len();
                enc = self.make(Node::DotSuffix(enc, suffix))?;
            }
            return (self.left() == 0).then_some(enc);
        }
        if self.eat_str("___Z") || self.eat_str("____Z") {
            let enc = self.encoding()?;
            if !self.eat_str("_block_invoke") {
                return None;
            }
            let require = self.eat(b'_');
            if self.number(false).is_none() && require {
                return None;
            }
            if self.look(0) == b'.' {
                self.pos = self.src.len();
            }
            if self.left() != 0 {
                return None;
            }
            return self.make(Node::Special("invocation function for block in ", enc));
        }
        None
    }

    fn encoding(&mut self) -> R {
        self.enter()?;
        let saved = self.save_template_params();
        let r = self.encoding_inner();
        self.restore_template_params(saved);
        self.leave();
        r
    }

    fn save_template_params(&mut self) -> (Vec<Level>, Vec<Id>) {
        (
            std::mem::take(&mut self.levels),
            std::mem::take(&mut self.outer),
        )
    }

    fn restore_template_params(&mut self, saved: (Vec<Level>, Vec<Id>)) {
        self.levels = saved.0;
        self.outer = saved.1;
    }

    fn encoding_inner(&mut self) -> R {
        if self.look(0) == b'G' || self.look(0) == b'T' {
            return self.special_name();
        }
        let mut st = NameState {
            forward_refs_begin: self.forward_refs.len(),
            ..NameState::default()
        };
        let name = self.name_with(Some(&mut st))?;
        self.resolve_forward_refs(&st)?;
        let at_end = |p: &Self| p.left() == 0 || matches!(p.look(0), b'E' | b'.' | b'_');
        if at_end(self) {
            return Some(name);
        }
        let mut attrs = None;
        if self.eat_str("Ua9enable_ifI") {
            let mut args = Vec::new();
            while !self.eat(b'E') {
                args.push(self.template_arg()?);
            }
            attrs = Some(self.make(Node::EnableIf(args.into()))?);
        }
        let mut ret = None;
        if !st.ctor_dtor_conversion && st.ends_with_template_args {
            ret = Some(self.ty()?);
        }
        let mut params = Vec::new();
        if !self.eat(b'v') {
            loop {
                let mut t = self.ty()?;
                if st.explicit_object && params.is_empty() {
                    t = self.make(Node::ExplicitObject(t))?;
                }
                params.push(t);
                if at_end(self) || self.look(0) == b'Q' {
                    break;
                }
            }
        }
        let mut requires = None;
        if self.eat(b'Q') {
            requires = Some(self.constraint_expr()?);
        }
        self.make(Node::Encoding {
            ret,
            name,
            params: params.into(),
            attrs,
            requires,
            cv: st.cv,
            ref_qual: st.ref_qual,
        })
    }

    fn resolve_forward_refs(&mut self, st: &NameState) -> Option<()> {
        for i in st.forward_refs_begin..self.forward_refs.len() {
            let id = self.forward_refs[i];
            let Node::ForwardRef { index, .. } = self.nodes[id as usize] else {
                return None;
            };
            let target = match self.levels.first() {
                Some(Level::Outer) => *self.outer.get(index)?,
                Some(Level::List(l)) => *l.get(index)?,
                _ => return None,
            };
            if let Node::ForwardRef { target: t, .. } = &mut self.nodes[id as usize] {
                *t = Some(target);
            }
        }
        self.forward_refs.truncate(st.forward_refs_begin);
        Some(())
    }

    fn call_offset(&mut self) -> Option<()> {
        if self.eat(b'h') {
            self.number(true)?;
            return self.eat(b'_').then_some(());
        }
        if self.eat(b'v') {
            self.number(true)?;
            if !self.eat(b'_') {
                return None;
            }
            self.number(true)?;
            return self.eat(b'_').then_some(());
        }
        None
    }

    fn special_name(&mut self) -> R {
        let c1 = self.look(1);
        match self.look(0) {
            b'T' => {
                self.pos += 2;
                let (text, kind) = match c1 {
                    b'A' => {
                        let a = self.template_arg()?;
                        return self.make(Node::Special("template parameter object for ", a));
                    }
                    b'V' => ("vtable for ", 0),
                    b'T' => ("VTT for ", 0),
                    b'I' => ("typeinfo for ", 0),
                    b'S' => ("typeinfo name for ", 0),
                    b'c' => {
                        self.call_offset()?;
                        self.call_offset()?;
                        let e = self.encoding()?;
                        return self.make(Node::Special("covariant return thunk to ", e));
                    }
                    b'C' => {
                        let first = self.ty()?;
                        self.number(true)?;
                        if !self.eat(b'_') {
                            return None;
                        }
                        let second = self.ty()?;
                        return self.make(Node::CtorVtable(second, first));
                    }
                    b'W' => ("thread-local wrapper routine for ", 1),
                    b'H' => ("thread-local initialization routine for ", 1),
                    _ => {
                        self.pos -= 1;
                        let virt = self.look(0) == b'v';
                        self.call_offset()?;
                        let e = self.encoding()?;
                        let text = if virt {
                            "virtual thunk to "
                        } else {
                            "non-virtual thunk to "
                        };
                        return self.make(Node::Special(text, e));
                    }
                };
                let child = if kind == 0 { self.ty()? } else { self.name()? };
                self.make(Node::Special(text, child))
            }
            b'G' => match c1 {
                b'V' => {
                    self.pos += 2;
                    let n = self.name()?;
                    self.make(Node::Special("guard variable for ", n))
                }
                b'R' => {
                    self.pos += 2;
                    let n = self.name()?;
                    let had_seq = self.seq_id().is_some();
                    if !self.eat(b'_') && had_seq {
                        return None;
                    }
                    self.make(Node::Special("reference temporary for ", n))
                }
                b'I' => {
                    self.pos += 2;
                    let mut module = None;
                    self.module_name(&mut module)?;
                    let m = module?;
                    self.make(Node::Special("initializer for module ", m))
                }
                _ => None,
            },
            _ => None,
        }
    }

    fn seq_id(&mut self) -> Option<usize> {
        let c = self.look(0);
        if !(c.is_ascii_digit() || c.is_ascii_uppercase()) {
            return None;
        }
        let mut id: usize = 0;
        loop {
            let c = self.look(0);
            let d = if c.is_ascii_digit() {
                c - b'0'
            } else if c.is_ascii_uppercase() {
                c - b'A' + 10
            } else {
                return Some(id);
            };
            id = id.checked_mul(36)?.checked_add(d as usize)?;
            self.pos += 1;
        }
    }

    // ---- names -------------------------------------------------------

    fn name(&mut self) -> R {
        self.name_with(None)
    }

    fn name_with(&mut self, mut st: Option<&mut NameState>) -> R {
        self.enter()?;
        let r = (|| {
            if self.look(0) == b'N' {
                return self.nested_name(st);
            }
            if self.look(0) == b'Z' {
                return self.local_name(st);
            }
            let mut is_subst = false;
            let mut result = self.unscoped_name(st.as_deref_mut(), Some(&mut is_subst))?;
            if self.look(0) == b'I' {
                if !is_subst {
                    self.subs.push(result);
                }
                let args = self.template_args(st.is_some())?;
                if let Some(st) = st {
                    st.ends_with_template_args = true;
                }
                result = self.make(Node::Template(result, args))?;
            } else if is_subst {
                return None;
            }
            Some(result)
        })();
        self.leave();
        r
    }

    fn local_name(&mut self, st: Option<&mut NameState>) -> R {
        if !self.eat(b'Z') {
            return None;
        }
        let enc = self.encoding()?;
        if !self.eat(b'E') {
            return None;
        }
        if self.eat(b's') {
            self.discriminator();
            let s = self.text_node("string literal")?;
            return self.make(Node::Local(enc, s));
        }
        let saved = self.save_template_params();
        let r = (|| {
            if self.eat(b'd') {
                self.opt_number(true);
                if !self.eat(b'_') {
                    return None;
                }
                let n = self.name_with(st)?;
                return self.make(Node::Local(enc, n));
            }
            let entity = self.name_with(st)?;
            self.discriminator();
            self.make(Node::Local(enc, entity))
        })();
        self.restore_template_params(saved);
        r
    }

    fn discriminator(&mut self) {
        let b = self.src.as_bytes();
        let (first, last) = (self.pos, b.len());
        if first == last {
            return;
        }
        if b[first] == b'_' {
            let t1 = first + 1;
            if t1 != last {
                if b[t1].is_ascii_digit() {
                    self.pos = t1 + 1;
                } else if b[t1] == b'_' {
                    let mut t = t1 + 1;
                    while t != last && b[t].is_ascii_digit() {
                        t += 1;
                    }
                    if t != last && b[t] == b'_' {
                        self.pos = t + 1;
                    }
                }
            }
        } else if b[first].is_ascii_digit() {
            let mut t = first + 1;
            while t != last && b[t].is_ascii_digit() {
                t += 1;
            }
            if t == last {
                self.pos = last;
            }
        }
    }

    fn unscoped_name(&mut self, st: Option<&mut NameState>, is_subst: Option<&mut bool>) -> R {
        let mut std = None;
        if self.eat_str("St") {
            std = Some(self.text_node("std")?);
        }
        let mut module = None;
        if self.look(0) == b'S' {
            let s = self.substitution()?;
            if matches!(self.nodes[s as usize], Node::Module { .. }) {
                module = Some(s);
            } else if let (Some(flag), None) = (is_subst, std) {
                *flag = true;
                return Some(s);
            } else {
                return None;
            }
        }
        self.unqualified_name(st, std, module)
    }

    fn unqualified_name(
        &mut self,
        mut st: Option<&mut NameState>,
        scope: Option<Id>,
        mut module: Option<Id>,
    ) -> R {
        self.module_name(&mut module)?;
        let friend = scope.is_some() && self.eat(b'F');
        self.eat(b'L');
        let c = self.look(0);
        let mut result = if (b'1'..=b'9').contains(&c) {
            self.source_name()?
        } else if c == b'U' {
            self.unnamed_type_name(st.as_deref_mut())?
        } else if self.eat_str("DC") {
            let mut names = Vec::new();
            loop {
                names.push(self.source_name()?);
                if self.eat(b'E') {
                    break;
                }
            }
            self.make(Node::Binding(names.into()))?
        } else if c == b'C' || c == b'D' {
            let scope = scope?;
            if module.is_some() {
                return None;
            }
            return self.ctor_dtor_name(scope, st);
        } else {
            self.operator_name(st)?
        };
        if let Some(m) = module {
            result = self.make(Node::ModuleEntity(m, result))?;
        }
        result = self.abi_tags(result)?;
        match scope {
            Some(s) if friend => self.make(Node::Friend(s, result)),
            Some(s) => self.make(Node::Nested(s, result)),
            None => Some(result),
        }
    }

    fn module_name(&mut self, module: &mut Option<Id>) -> Option<()> {
        while self.eat(b'W') {
            let partition = self.eat(b'P');
            let sub = self.source_name()?;
            let m = self.make(Node::Module {
                parent: *module,
                name: sub,
                partition,
            })?;
            self.subs.push(m);
            *module = Some(m);
        }
        Some(())
    }

    fn source_name(&mut self) -> R {
        let s = self.bare_source_name()?;
        if s.starts_with("_GLOBAL__N") {
            return self.text_node("(anonymous namespace)");
        }
        self.text_node(s)
    }

    fn abi_tags(&mut self, mut n: Id) -> R {
        while self.eat(b'B') {
            let tag = self.bare_source_name()?;
            n = self.make(Node::AbiTag(n, tag))?;
        }
        Some(n)
    }

    fn unnamed_type_name(&mut self, st: Option<&mut NameState>) -> R {
        if st.is_some() {
            self.levels.clear();
        }
        if self.eat_str("Ut") {
            let count = self.opt_number(false);
            if !self.eat(b'_') {
                return None;
            }
            return self.make(Node::Unnamed(count));
        }
        if self.eat_str("Ul") {
            let saved_lambda = self.lambda_level;
            self.lambda_level = self.levels.len();
            let old_len = self.levels.len();
            self.levels.push(Level::List(Vec::new()));
            let r = self.closure(old_len);
            self.levels.truncate(old_len);
            self.lambda_level = saved_lambda;
            return r;
        }
        if self.eat_str("Ub") {
            self.opt_number(false);
            if !self.eat(b'_') {
                return None;
            }
            return self.text_node("'block-literal'");
        }
        None
    }

    fn closure(&mut self, level: usize) -> R {
        let mut tparams = Vec::new();
        while self.is_template_param_decl() {
            tparams.push(self.template_param_decl(Some(level))?);
        }
        if tparams.is_empty() {
            self.levels.pop();
        }
        let mut requires1 = None;
        if self.eat(b'Q') {
            requires1 = Some(self.constraint_expr()?);
        }
        let mut params = Vec::new();
        if !self.eat(b'v') {
            loop {
                params.push(self.ty()?);
                if self.look(0) == b'E' || self.look(0) == b'Q' {
                    break;
                }
            }
        }
        let mut requires2 = None;
        if self.eat(b'Q') {
            requires2 = Some(self.constraint_expr()?);
        }
        if !self.eat(b'E') {
            return None;
        }
        let count = self.opt_number(false);
        if !self.eat(b'_') {
            return None;
        }
        self.make(Node::Closure {
            template_params: tparams.into(),
            requires1,
            params: params.into(),
            requires2,
            count,
        })
    }

    fn ctor_dtor_name(&mut self, scope: Id, st: Option<&mut NameState>) -> R {
        let mut scope = scope;
        if let Node::StdSub(k) = self.nodes[scope as usize] {
            scope = self.make(Node::ExpandedStdSub(k))?;
        }
        let base = scope;
        let name = if self.eat(b'C') {
            let inherited = self.eat(b'I');
            if !(b'1'..=b'5').contains(&self.look(0)) {
                return None;
            }
            self.pos += 1;
            let mut st = st;
            if let Some(s) = st.as_deref_mut() {
                s.ctor_dtor_conversion = true;
            }
            if inherited {
                self.name_with(st)?;
            }
            self.make(Node::CtorDtor { base, dtor: false })?
        } else if self.look(0) == b'D' && matches!(self.look(1), b'0' | b'1' | b'2' | b'4' | b'5') {
            self.pos += 2;
            if let Some(s) = st {
                s.ctor_dtor_conversion = true;
            }
            self.make(Node::CtorDtor { base, dtor: true })?
        } else {
            return None;
        };
        let name = self.abi_tags(name)?;
        self.make(Node::Nested(scope, name))
    }

    fn nested_name(&mut self, mut st: Option<&mut NameState>) -> R {
        if !self.eat(b'N') {
            return None;
        }
        if !self.eat(b'H') {
            let cv = self.cv_qualifiers();
            let rq = if self.eat(b'O') {
                REF_RVALUE
            } else if self.eat(b'R') {
                REF_LVALUE
            } else {
                REF_NONE
            };
            if let Some(s) = st.as_deref_mut() {
                s.cv = cv;
                s.ref_qual = rq;
            }
        } else if let Some(s) = st.as_deref_mut() {
            s.explicit_object = true;
        }
        let mut so_far: Option<Id> = None;
        while !self.eat(b'E') {
            if let Some(s) = st.as_deref_mut() {
                s.ends_with_template_args = false;
            }
            let c = self.look(0);
            if c == b'T' {
                if so_far.is_some() {
                    return None;
                }
                so_far = Some(self.template_param()?);
            } else if c == b'I' {
                let prefix = so_far?;
                let args = self.template_args(st.is_some())?;
                if matches!(self.nodes[prefix as usize], Node::Template(..)) {
                    return None;
                }
                if let Some(s) = st.as_deref_mut() {
                    s.ends_with_template_args = true;
                }
                so_far = Some(self.make(Node::Template(prefix, args))?);
            } else if c == b'D' && matches!(self.look(1), b't' | b'T') {
                if so_far.is_some() {
                    return None;
                }
                so_far = Some(self.decltype()?);
            } else {
                let mut module = None;
                if c == b'S' {
                    let s = if self.look(1) == b't' {
                        self.pos += 2;
                        self.text_node("std")?
                    } else {
                        self.substitution()?
                    };
                    if matches!(self.nodes[s as usize], Node::Module { .. }) {
                        module = Some(s);
                    } else if so_far.is_some() {
                        return None;
                    } else {
                        so_far = Some(s);
                        continue;
                    }
                }
                so_far = Some(self.unqualified_name(st.as_deref_mut(), so_far, module)?);
            }
            self.subs.push(so_far?);
            self.eat(b'M');
        }
        let r = so_far?;
        self.subs.pop()?;
        Some(r)
    }

    fn operator_name(&mut self, st: Option<&mut NameState>) -> R {
        if let Some(op) = self.operator_encoding() {
            if op.kind == Kind::CCast {
                let saved_try = self.try_template_args;
                let saved_permit = self.permit_forward_refs;
                self.try_template_args = false;
                self.permit_forward_refs = saved_permit || st.is_some();
                let t = self.ty();
                self.try_template_args = saved_try;
                self.permit_forward_refs = saved_permit;
                let t = t?;
                if let Some(s) = st {
                    s.ctor_dtor_conversion = true;
                }
                return self.make(Node::Conversion(t));
            }
            if op.kind >= Kind::NamedCast {
                return None;
            }
            if op.kind == Kind::Member && !op.flag {
                return None;
            }
            return self.text_node(op.name);
        }
        if self.eat_str("li") {
            let n = self.source_name()?;
            return self.make(Node::LiteralOperator(n));
        }
        if self.eat(b'v') {
            if self.look(0).is_ascii_digit() {
                self.pos += 1;
                let n = self.source_name()?;
                return self.make(Node::Conversion(n));
            }
            return None;
        }
        None
    }

    fn substitution(&mut self) -> R {
        if !self.eat(b'S') {
            return None;
        }
        let c = self.look(0);
        if c.is_ascii_lowercase() {
            let kind = match c {
                b'a' => StdSub::Allocator,
                b'b' => StdSub::BasicString,
                b'd' => StdSub::Iostream,
                b'i' => StdSub::Istream,
                b'o' => StdSub::Ostream,
                b's' => StdSub::String,
                _ => return None,
            };
            self.pos += 1;
            let sub = self.make(Node::StdSub(kind))?;
            let tagged = self.abi_tags(sub)?;
            if tagged != sub {
                self.subs.push(tagged);
            }
            return Some(tagged);
        }
        if self.eat(b'_') {
            return self.subs.first().copied();
        }
        let index = self.seq_id()?.checked_add(1)?;
        if !self.eat(b'_') {
            return None;
        }
        self.subs.get(index).copied()
    }

    // ---- template parameters and arguments ---------------------------

    fn template_param(&mut self) -> R {
        let begin = self.pos;
        if !self.eat(b'T') {
            return None;
        }
        let mut level = 0;
        if self.eat(b'L') {
            level = self.positive()?.checked_add(1)?;
            if !self.eat(b'_') {
                return None;
            }
        }
        let mut index = 0;
        if !self.eat(b'_') {
            index = self.positive()?.checked_add(1)?;
            if !self.eat(b'_') {
                return None;
            }
        }
        if self.incomplete_tracking {
            let s = self.src.get(begin..self.pos - 1)?;
            return self.text_node(s);
        }
        if self.permit_forward_refs && level == 0 {
            let r = self.make(Node::ForwardRef {
                index,
                target: None,
            })?;
            self.forward_refs.push(r);
            return Some(r);
        }
        let found = match self.levels.get(level) {
            Some(Level::Outer) => self.outer.get(index).copied(),
            Some(Level::List(l)) => l.get(index).copied(),
            _ => None,
        };
        if let Some(f) = found {
            return Some(f);
        }
        if self.lambda_level == level && level <= self.levels.len() {
            if level == self.levels.len() {
                self.levels.push(Level::Null);
            }
            return self.text_node("auto");
        }
        None
    }

    fn is_template_param_decl(&self) -> bool {
        self.look(0) == b'T' && matches!(self.look(1), b'y' | b'p' | b't' | b'n' | b'k')
    }

    fn invent_param(&mut self, kind: u8, list: Option<usize>) -> R {
        let index = self.synthetic[kind as usize];
        self.synthetic[kind as usize] += 1;
        let n = self.make(Node::SyntheticParam(kind, index))?;
        if let Some(l) = list
            && let Some(Level::List(v)) = self.levels.get_mut(l)
        {
            v.push(n);
        }
        Some(n)
    }

    fn template_param_decl(&mut self, list: Option<usize>) -> R {
        self.enter()?;
        let r = self.template_param_decl_inner(list);
        self.leave();
        r
    }

    fn template_param_decl_inner(&mut self, list: Option<usize>) -> R {
        if self.eat_str("Ty") {
            let n = self.invent_param(0, list)?;
            return self.make(Node::TypeParamDecl(n));
        }
        if self.eat_str("Tk") {
            let saved = self.incomplete_tracking;
            self.incomplete_tracking = true;
            let c = self.name();
            self.incomplete_tracking = saved;
            let c = c?;
            let n = self.invent_param(0, list)?;
            return self.make(Node::ConstrainedParamDecl(c, n));
        }
        if self.eat_str("Tn") {
            let n = self.invent_param(1, list)?;
            let t = self.ty()?;
            return self.make(Node::NonTypeParamDecl(n, t));
        }
        if self.eat_str("Tt") {
            let n = self.invent_param(2, list)?;
            let old_len = self.levels.len();
            self.levels.push(Level::List(Vec::new()));
            let r = (|| {
                let mut inner = Vec::new();
                let mut requires = None;
                while !self.eat(b'E') {
                    inner.push(self.template_param_decl(Some(old_len))?);
                    if self.eat(b'Q') {
                        requires = Some(self.constraint_expr()?);
                        if !self.eat(b'E') {
                            return None;
                        }
                        break;
                    }
                }
                self.make(Node::TemplateParamDecl(n, inner.into(), requires))
            })();
            self.levels.truncate(old_len);
            return r;
        }
        if self.eat_str("Tp") {
            let p = self.template_param_decl(list)?;
            return self.make(Node::ParamPackDecl(p));
        }
        None
    }

    fn template_args(&mut self, tag: bool) -> R {
        if !self.eat(b'I') {
            return None;
        }
        if tag {
            self.levels.clear();
            self.levels.push(Level::Outer);
            self.outer.clear();
        }
        let mut args = Vec::new();
        while !self.eat(b'E') {
            let arg = self.template_arg()?;
            args.push(arg);
            if tag {
                let mut entry = arg;
                if let Node::QualifiedArg(a) = self.nodes[arg as usize] {
                    entry = a;
                }
                if let Node::ArgPack(items) = &self.nodes[arg as usize] {
                    let items = items.clone();
                    entry = self.make(Node::Pack(items))?;
                }
                self.outer.push(entry);
            }
            if self.eat(b'Q') {
                // The requires clause is parsed but not printed.
                self.constraint_expr()?;
                if !self.eat(b'E') {
                    return None;
                }
                break;
            }
        }
        self.make(Node::TemplateArgs(args.into()))
    }

    fn template_arg(&mut self) -> R {
        self.enter()?;
        let r = self.template_arg_inner();
        self.leave();
        r
    }

    fn template_arg_inner(&mut self) -> R {
        match self.look(0) {
            b'X' => {
                self.pos += 1;
                let e = self.expr()?;
                self.eat(b'E').then_some(e)
            }
            b'J' => {
                self.pos += 1;
                let mut args = Vec::new();
                while !self.eat(b'E') {
                    args.push(self.template_arg()?);
                }
                self.make(Node::ArgPack(args.into()))
            }
            b'L' => {
                if self.look(1) == b'Z' {
                    self.pos += 2;
                    let e = self.encoding()?;
                    return self.eat(b'E').then_some(e);
                }
                self.expr_primary()
            }
            b'T' => {
                if !self.is_template_param_decl() {
                    return self.ty();
                }
                self.template_param_decl(None)?;
                let a = self.template_arg()?;
                self.make(Node::QualifiedArg(a))
            }
            _ => self.ty(),
        }
    }

    // ---- types -------------------------------------------------------

    pub(super) fn ty(&mut self) -> R {
        self.enter()?;
        let r = self.ty_inner();
        self.leave();
        r
    }

    fn builtin(&self, c: u8) -> Option<&'static str> {
        Some(match c {
            b'v' => "void",
            b'w' => "wchar_t",
            b'b' => "bool",
            b'c' => "char",
            b'a' => "signed char",
            b'h' => "unsigned char",
            b's' => "short",
            b't' => "unsigned short",
            b'i' => "int",
            b'j' => "unsigned int",
            b'l' => "long",
            b'm' => "unsigned long",
            b'x' => "long long",
            b'y' => "unsigned long long",
            b'n' => "__int128",
            b'o' => "unsigned __int128",
            b'f' => "float",
            b'd' => "double",
            b'e' => "long double",
            b'g' => "__float128",
            b'z' => "...",
            _ => return None,
        })
    }

    fn ty_inner(&mut self) -> R {
        let c = self.look(0);
        if let Some(b) = self.builtin(c) {
            self.pos += 1;
            return self.text_node(b);
        }
        let result = match c {
            b'r' | b'V' | b'K' => {
                let mut after = 0;
                for q in [b'r', b'V', b'K'] {
                    if self.look(after) == q {
                        after += 1;
                    }
                }
                if self.look(after) == b'F'
                    || (self.look(after) == b'D'
                        && matches!(self.look(after + 1), b'o' | b'O' | b'w' | b'x'))
                {
                    self.function_type()?
                } else {
                    self.qualified_type()?
                }
            }
            b'U' => self.qualified_type()?,
            b'u' => {
                self.pos += 1;
                let res = self.bare_source_name()?;
                if self.eat(b'I') {
                    let base = self.ty()?;
                    if !self.eat(b'E') {
                        return None;
                    }
                    self.make(Node::Transformed(res, base))?
                } else {
                    self.text_node(res)?
                }
            }
            b'D' => match self.d_type()? {
                DType::Done(id) => return Some(id),
                DType::Sub(id) => id,
                DType::Fixed(_) => return None,
            },
            b'F' => self.function_type()?,
            b'A' => self.array_type()?,
            b'M' => {
                self.pos += 1;
                let class = self.ty()?;
                let member = self.ty()?;
                self.make(Node::MemberPointer(class, member))?
            }
            b'T' => {
                if matches!(self.look(1), b's' | b'u' | b'e') {
                    self.class_enum_type()?
                } else {
                    let mut r = self.template_param()?;
                    if self.try_template_args && self.look(0) == b'I' {
                        self.subs.push(r);
                        let args = self.template_args(false)?;
                        r = self.make(Node::Template(r, args))?;
                    }
                    r
                }
            }
            b'P' => {
                self.pos += 1;
                let p = self.ty()?;
                self.make(Node::Pointer(p))?
            }
            b'R' | b'O' => {
                self.pos += 1;
                let p = self.ty()?;
                self.make(Node::Reference(p, c == b'O'))?
            }
            b'C' => {
                self.pos += 1;
                let p = self.ty()?;
                self.make(Node::PostfixQualified(p, " complex"))?
            }
            b'G' => {
                self.pos += 1;
                let p = self.ty()?;
                self.make(Node::PostfixQualified(p, " imaginary"))?
            }
            b'S' if self.look(1) != b't' => {
                let mut is_subst = false;
                let r = self.unscoped_name(None, Some(&mut is_subst))?;
                if self.look(0) == b'I' && (!is_subst || self.try_template_args) {
                    if !is_subst {
                        self.subs.push(r);
                    }
                    let args = self.template_args(false)?;
                    self.make(Node::Template(r, args))?
                } else if is_subst {
                    return Some(r);
                } else {
                    r
                }
            }
            _ => self.class_enum_type()?,
        };
        self.subs.push(result);
        Some(result)
    }

    fn d_type(&mut self) -> Option<DType> {
        let fixed = |s: &'static str| Some(DType::Fixed(s));
        let c = self.look(1);
        let simple = match c {
            b'd' => fixed("decimal64"),
            b'e' => fixed("decimal128"),
            b'f' => fixed("decimal32"),
            b'h' => fixed("half"),
            b'i' => fixed("char32_t"),
            b's' => fixed("char16_t"),
            b'u' => fixed("char8_t"),
            b'a' => fixed("auto"),
            b'c' => fixed("decltype(auto)"),
            b'n' => fixed("std::nullptr_t"),
            _ => None,
        };
        if let Some(DType::Fixed(s)) = simple {
            self.pos += 2;
            return Some(DType::Done(self.text_node(s)?));
        }
        match c {
            b'F' => {
                self.pos += 2;
                if self.eat_str("16b") {
                    return Some(DType::Done(self.text_node("std::bfloat16_t")?));
                }
                let n = self.opt_number(false);
                let dim = self.text_node(n)?;
                if !self.eat(b'_') {
                    return None;
                }
                Some(DType::Done(self.make(Node::BinaryFloat(dim))?))
            }
            b'A' | b'R' => {
                let fract = c == b'R';
                let k = self.look(2);
                self.pos += 3;
                Some(DType::Done(self.fixed_point(false, fract, k)?))
            }
            b'S' => {
                self.pos += 2;
                if self.look(0) != b'D' {
                    return None;
                }
                let fract = match self.look(1) {
                    b'A' => false,
                    b'R' => true,
                    _ => return None,
                };
                let k = self.look(2);
                self.pos += 3;
                Some(DType::Done(self.fixed_point(true, fract, k)?))
            }
            b'B' | b'U' => {
                let signed = c == b'B';
                self.pos += 2;
                let size = if self.look(0).is_ascii_digit() {
                    let n = self.opt_number(false);
                    self.text_node(n)?
                } else {
                    self.expr()?
                };
                if !self.eat(b'_') {
                    return None;
                }
                Some(DType::Done(self.make(Node::BitInt(size, signed))?))
            }
            b'k' | b'K' => {
                let kind = if c == b'k' {
                    " auto"
                } else {
                    " decltype(auto)"
                };
                self.pos += 2;
                let constraint = self.name()?;
                Some(DType::Done(
                    self.make(Node::PostfixQualified(constraint, kind))?,
                ))
            }
            b't' | b'T' => Some(DType::Sub(self.decltype()?)),
            b'v' => Some(DType::Sub(self.vector_type()?)),
            b'p' => {
                self.pos += 2;
                let child = self.ty()?;
                Some(DType::Sub(self.make(Node::Expansion(child))?))
            }
            b'o' | b'O' | b'w' | b'x' => Some(DType::Sub(self.function_type()?)),
            _ => None,
        }
    }

    fn fixed_point(&mut self, sat: bool, fract: bool, k: u8) -> R {
        let base = match k {
            b's' => 0,
            b't' => 1,
            b'i' => 2,
            b'j' => 3,
            b'l' => 4,
            b'm' => 5,
            _ => return None,
        };
        const ACCUM: [&str; 6] = [
            "short _Accum",
            "unsigned short _Accum",
            "_Accum",
            "unsigned _Accum",
            "long _Accum",
            "unsigned long _Accum",
        ];
        const FRACT: [&str; 6] = [
            "short _Fract",
            "unsigned short _Fract",
            "_Fract",
            "unsigned _Fract",
            "long _Fract",
            "unsigned long _Fract",
        ];
        const SAT_ACCUM: [&str; 6] = [
            "_Sat short _Accum",
            "_Sat unsigned short _Accum",
            "_Sat _Accum",
            "_Sat unsigned _Accum",
            "_Sat long _Accum",
            "_Sat unsigned long _Accum",
        ];
        const SAT_FRACT: [&str; 6] = [
            "_Sat short _Fract",
            "_Sat unsigned short _Fract",
            "_Sat _Fract",
            "_Sat unsigned _Fract",
            "_Sat long _Fract",
            "_Sat unsigned long _Fract",
        ];
        let table = match (sat, fract) {
            (false, false) => ACCUM,
            (false, true) => FRACT,
            (true, false) => SAT_ACCUM,
            (true, true) => SAT_FRACT,
        };
        self.text_node(table[base])
    }

    fn qualified_type(&mut self) -> R {
        if self.eat(b'U') {
            let qual = self.bare_source_name()?;
            if qual.starts_with("objcproto") {
                // Objective-C protocol qualifiers are not demangled here.
                return None;
            }
            let mut args = None;
            if self.look(0) == b'I' {
                args = Some(self.template_args(false)?);
            }
            let child = self.qualified_type()?;
            return self.make(Node::VendorQualified(child, qual, args));
        }
        let quals = self.cv_qualifiers();
        let t = self.ty()?;
        if quals != 0 {
            return self.make(Node::Qualified(t, quals));
        }
        Some(t)
    }

    fn function_type(&mut self) -> R {
        let cv = self.cv_qualifiers();
        let mut exception = None;
        if self.eat_str("Do") {
            exception = Some(self.text_node("noexcept")?);
        } else if self.eat_str("DO") {
            let e = self.expr()?;
            if !self.eat(b'E') {
                return None;
            }
            exception = Some(self.make(Node::NoexceptSpec(e))?);
        } else if self.eat_str("Dw") {
            let mut types = Vec::new();
            while !self.eat(b'E') {
                types.push(self.ty()?);
            }
            exception = Some(self.make(Node::DynamicExceptionSpec(types.into()))?);
        }
        self.eat_str("Dx");
        if !self.eat(b'F') {
            return None;
        }
        self.eat(b'Y');
        let ret = self.ty()?;
        let mut ref_qual = REF_NONE;
        let mut params = Vec::new();
        loop {
            if self.eat(b'E') {
                break;
            }
            if self.eat(b'v') {
                continue;
            }
            if self.eat_str("RE") {
                ref_qual = REF_LVALUE;
                break;
            }
            if self.eat_str("OE") {
                ref_qual = REF_RVALUE;
                break;
            }
            if self.left() == 0 {
                return None;
            }
            params.push(self.ty()?);
        }
        self.make(Node::Function {
            ret,
            params: params.into(),
            cv,
            ref_qual,
            exception,
        })
    }

    fn vector_type(&mut self) -> R {
        if !self.eat_str("Dv") {
            return None;
        }
        if (b'1'..=b'9').contains(&self.look(0)) {
            let n = self.opt_number(false);
            let dim = self.text_node(n)?;
            if !self.eat(b'_') {
                return None;
            }
            if self.eat(b'p') {
                return self.make(Node::PixelVector(dim));
            }
            let elem = self.ty()?;
            return self.make(Node::Vector(elem, Some(dim)));
        }
        if !self.eat(b'_') {
            let dim = self.expr()?;
            if !self.eat(b'_') {
                return None;
            }
            let elem = self.ty()?;
            return self.make(Node::Vector(elem, Some(dim)));
        }
        let elem = self.ty()?;
        self.make(Node::Vector(elem, None))
    }

    fn decltype(&mut self) -> R {
        if !self.eat(b'D') {
            return None;
        }
        if !self.eat(b't') && !self.eat(b'T') {
            return None;
        }
        let e = self.expr()?;
        if !self.eat(b'E') {
            return None;
        }
        self.make(Node::Enclosing("decltype", e, Prec::Primary))
    }

    fn array_type(&mut self) -> R {
        if !self.eat(b'A') {
            return None;
        }
        let mut dim = None;
        if self.look(0).is_ascii_digit() {
            let n = self.opt_number(false);
            dim = Some(self.text_node(n)?);
            if !self.eat(b'_') {
                return None;
            }
        } else if !self.eat(b'_') {
            let e = self.expr()?;
            if !self.eat(b'_') {
                return None;
            }
            dim = Some(e);
        }
        let t = self.ty()?;
        self.make(Node::Array(t, dim))
    }

    fn class_enum_type(&mut self) -> R {
        let elab = if self.eat_str("Ts") {
            Some("struct")
        } else if self.eat_str("Tu") {
            Some("union")
        } else if self.eat_str("Te") {
            Some("enum")
        } else {
            None
        };
        let n = self.name()?;
        match elab {
            Some(e) => self.make(Node::Elaborated(e, n)),
            None => Some(n),
        }
    }

    // ---- expressions -------------------------------------------------

    fn constraint_expr(&mut self) -> R {
        let saved = self.incomplete_tracking;
        self.incomplete_tracking = true;
        let r = self.expr();
        self.incomplete_tracking = saved;
        r
    }

    pub(super) fn expr(&mut self) -> R {
        self.enter()?;
        let r = self.expr_inner();
        self.leave();
        r
    }

    fn expr_inner(&mut self) -> R {
        let global = self.eat_str("gs");
        if let Some(op) = self.operator_encoding() {
            let sym = op.symbol();
            let prec = op.prec;
            return match op.kind {
                Kind::Binary => {
                    let l = self.expr()?;
                    let r = self.expr()?;
                    self.make(Node::Binary(l, sym, r, prec))
                }
                Kind::Prefix => {
                    let e = self.expr()?;
                    self.make(Node::Prefix(sym, e, prec))
                }
                Kind::Postfix => {
                    if self.eat(b'_') {
                        let e = self.expr()?;
                        return self.make(Node::Prefix(sym, e, prec));
                    }
                    let e = self.expr()?;
                    self.make(Node::PostfixExpr(e, sym, prec))
                }
                Kind::Array => {
                    let b = self.expr()?;
                    let i = self.expr()?;
                    self.make(Node::Subscript(b, i, prec))
                }
                Kind::Member => {
                    let l = self.expr()?;
                    let r = self.expr()?;
                    self.make(Node::Member(l, sym, r, prec))
                }
                Kind::New => {
                    let mut exprs = Vec::new();
                    while !self.eat(b'_') {
                        exprs.push(self.expr()?);
                    }
                    let ty = self.ty()?;
                    let have_inits = self.eat_str("pi");
                    let mut inits = Vec::new();
                    while !self.eat(b'E') {
                        if !have_inits {
                            return None;
                        }
                        inits.push(self.expr()?);
                    }
                    self.make(Node::New {
                        exprs: exprs.into(),
                        ty,
                        inits: inits.into(),
                        global,
                        array: op.flag,
                        prec,
                    })
                }
                Kind::Del => {
                    let e = self.expr()?;
                    self.make(Node::Delete(e, global, op.flag, prec))
                }
                Kind::Call => {
                    let callee = self.expr()?;
                    let mut args = Vec::new();
                    while !self.eat(b'E') {
                        args.push(self.expr()?);
                    }
                    self.make(Node::Call(callee, args.into(), op.flag, prec))
                }
                Kind::CCast => {
                    let saved = self.try_template_args;
                    self.try_template_args = false;
                    let ty = self.ty();
                    self.try_template_args = saved;
                    let ty = ty?;
                    let many = self.eat(b'_');
                    let mut exprs = Vec::new();
                    while !self.eat(b'E') {
                        exprs.push(self.expr()?);
                        if !many {
                            break;
                        }
                    }
                    if !many && exprs.len() != 1 {
                        return None;
                    }
                    self.make(Node::ConversionExpr(ty, exprs.into(), prec))
                }
                Kind::Conditional => {
                    let c = self.expr()?;
                    let l = self.expr()?;
                    let r = self.expr()?;
                    self.make(Node::Conditional(c, l, r, prec))
                }
                Kind::NamedCast => {
                    let t = self.ty()?;
                    let e = self.expr()?;
                    self.make(Node::Cast(sym, t, e, prec))
                }
                Kind::OfIdOp => {
                    let a = if op.flag { self.ty()? } else { self.expr()? };
                    self.make(Node::Enclosing(sym, a, prec))
                }
                Kind::NameOnly => None,
            };
        }
        if self.left() < 2 {
            return None;
        }
        let c = self.look(0);
        if c == b'L' {
            return self.expr_primary();
        }
        if c == b'T' {
            return self.template_param();
        }
        if c == b'f' {
            if self.look(1) == b'p' || (self.look(1) == b'L' && self.look(2).is_ascii_digit()) {
                return self.function_param();
            }
            return self.fold_expr();
        }
        if self.eat_str("il") {
            let mut inits = Vec::new();
            while !self.eat(b'E') {
                inits.push(self.braced_expr()?);
            }
            return self.make(Node::InitList(None, inits.into()));
        }
        if self.eat_str("mc") {
            let t = self.ty()?;
            let e = self.expr()?;
            self.opt_number(true);
            if !self.eat(b'E') {
                return None;
            }
            return self.make(Node::MemberConversion(t, e, Prec::Unary));
        }
        if self.eat_str("nx") {
            let e = self.expr()?;
            return self.make(Node::Enclosing("noexcept ", e, Prec::Unary));
        }
        if self.eat_str("so") {
            let ty = self.ty()?;
            let expr = self.expr()?;
            let offset = self.opt_number(true);
            while self.eat(b'_') {
                self.opt_number(false);
            }
            self.eat(b'p');
            if !self.eat(b'E') {
                return None;
            }
            return self.make(Node::Subobject { ty, expr, offset });
        }
        if self.eat_str("sp") {
            let child = self.expr()?;
            return self.make(Node::Expansion(child));
        }
        if self.eat_str("sZ") {
            if self.look(0) == b'T' {
                let r = self.template_param()?;
                return self.make(Node::SizeofPack(r));
            }
            let fp = self.function_param()?;
            return self.make(Node::Enclosing("sizeof... ", fp, Prec::Primary));
        }
        if self.eat_str("sP") {
            let mut args = Vec::new();
            while !self.eat(b'E') {
                args.push(self.template_arg()?);
            }
            let pack = self.make(Node::List(args.into()))?;
            return self.make(Node::Enclosing("sizeof... ", pack, Prec::Primary));
        }
        if self.eat_str("tl") {
            let t = self.ty()?;
            let mut inits = Vec::new();
            while !self.eat(b'E') {
                inits.push(self.braced_expr()?);
            }
            return self.make(Node::InitList(Some(t), inits.into()));
        }
        if self.eat_str("tr") {
            return self.text_node("throw");
        }
        if self.eat_str("tw") {
            let e = self.expr()?;
            return self.make(Node::Throw(e));
        }
        if self.eat(b'u') {
            let name = self.source_name()?;
            let mut args = Vec::new();
            let is_uuid = matches!(self.nodes[name as usize], Node::Name("__uuidof"));
            if is_uuid && self.eat(b't') {
                args.push(self.ty()?);
            } else if is_uuid && self.eat(b'z') {
                args.push(self.expr()?);
            } else {
                while !self.eat(b'E') {
                    args.push(self.template_arg()?);
                }
            }
            return self.make(Node::Call(name, args.into(), false, Prec::Postfix));
        }
        if c == b'r' && matches!(self.look(1), b'q' | b'Q') {
            // Requires-expressions are not demangled here.
            return None;
        }
        self.unresolved_name(global)
    }

    fn function_param(&mut self) -> R {
        if self.eat_str("fpT") {
            return self.text_node("this");
        }
        if self.eat_str("fp") {
            self.cv_qualifiers();
            let n = self.opt_number(false);
            if !self.eat(b'_') {
                return None;
            }
            return self.make(Node::FunctionParam(n));
        }
        if self.eat_str("fL") {
            self.number(false)?;
            if !self.eat(b'p') {
                return None;
            }
            self.cv_qualifiers();
            let n = self.opt_number(false);
            if !self.eat(b'_') {
                return None;
            }
            return self.make(Node::FunctionParam(n));
        }
        None
    }

    fn fold_expr(&mut self) -> R {
        if !self.eat(b'f') {
            return None;
        }
        let (left, has_init) = match self.look(0) {
            b'L' => (true, true),
            b'R' => (false, true),
            b'l' => (true, false),
            b'r' => (false, false),
            _ => return None,
        };
        self.pos += 1;
        let op = self.operator_encoding()?;
        if !(op.kind == Kind::Binary || (op.kind == Kind::Member && op.name.ends_with('*'))) {
            return None;
        }
        let mut pack = self.expr()?;
        let mut init = None;
        if has_init {
            init = Some(self.expr()?);
        }
        if left && let Some(i) = init {
            init = Some(pack);
            pack = i;
        }
        self.make(Node::Fold {
            left,
            op: op.symbol(),
            pack,
            init,
        })
    }

    fn braced_expr(&mut self) -> R {
        self.enter()?;
        let r = (|| {
            if self.look(0) == b'd' {
                match self.look(1) {
                    b'i' => {
                        self.pos += 2;
                        let f = self.source_name()?;
                        let i = self.braced_expr()?;
                        return self.make(Node::Braced(f, i, false));
                    }
                    b'x' => {
                        self.pos += 2;
                        let idx = self.expr()?;
                        let i = self.braced_expr()?;
                        return self.make(Node::Braced(idx, i, true));
                    }
                    b'X' => {
                        self.pos += 2;
                        let a = self.expr()?;
                        let b = self.expr()?;
                        let i = self.braced_expr()?;
                        return self.make(Node::BracedRange(a, b, i));
                    }
                    _ => {}
                }
            }
            self.expr()
        })();
        self.leave();
        r
    }

    fn integer_literal(&mut self, ty: &'static str) -> R {
        let n = self.number(true)?;
        if !self.eat(b'E') {
            return None;
        }
        self.make(Node::IntegerLiteral(ty, n))
    }

    fn expr_primary(&mut self) -> R {
        if !self.eat(b'L') {
            return None;
        }
        let c = self.look(0);
        let int_ty = match c {
            b'w' => Some("wchar_t"),
            b'c' => Some("char"),
            b'a' => Some("signed char"),
            b'h' => Some("unsigned char"),
            b's' => Some("short"),
            b't' => Some("unsigned short"),
            b'i' => Some(""),
            b'j' => Some("u"),
            b'l' => Some("l"),
            b'm' => Some("ul"),
            b'x' => Some("ll"),
            b'y' => Some("ull"),
            b'n' => Some("__int128"),
            b'o' => Some("unsigned __int128"),
            _ => None,
        };
        if let Some(t) = int_ty {
            self.pos += 1;
            return self.integer_literal(t);
        }
        match c {
            b'b' => {
                if self.eat_str("b0E") {
                    return self.make(Node::Bool(false));
                }
                if self.eat_str("b1E") {
                    return self.make(Node::Bool(true));
                }
                None
            }
            b'f' | b'd' | b'e' => {
                self.pos += 1;
                let (kind, len) = match c {
                    b'f' => (0, 8),
                    b'd' => (1, 16),
                    _ => (2, 20),
                };
                if self.left() <= len {
                    return None;
                }
                let start = self.pos;
                for _ in 0..len {
                    if !matches!(self.look(0), b'0'..=b'9' | b'a'..=b'f') {
                        return None;
                    }
                    self.pos += 1;
                }
                let data = self.text(start);
                if !self.eat(b'E') {
                    return None;
                }
                self.make(Node::FloatLiteral(kind, data))
            }
            b'_' => {
                if self.eat_str("_Z") {
                    let r = self.encoding()?;
                    if self.eat(b'E') {
                        return Some(r);
                    }
                }
                None
            }
            b'A' => {
                let t = self.ty()?;
                if self.eat(b'E') {
                    return self.make(Node::StringLiteral(t));
                }
                None
            }
            b'D' => {
                if self.eat_str("Dn") && {
                    self.eat(b'0');
                    self.eat(b'E')
                } {
                    return self.text_node("nullptr");
                }
                None
            }
            b'T' => None,
            b'U' => {
                if self.look(1) != b'l' {
                    return None;
                }
                let t = self.unnamed_type_name(None)?;
                if !self.eat(b'E') {
                    return None;
                }
                self.make(Node::Lambda(t))
            }
            _ => {
                let t = self.ty()?;
                let n = self.number(true)?;
                if !self.eat(b'E') {
                    return None;
                }
                self.make(Node::EnumLiteral(t, n))
            }
        }
    }

    fn unresolved_type(&mut self) -> R {
        if self.look(0) == b'T' {
            let t = self.template_param()?;
            self.subs.push(t);
            return Some(t);
        }
        if self.look(0) == b'D' {
            let d = self.decltype()?;
            self.subs.push(d);
            return Some(d);
        }
        self.substitution()
    }

    fn simple_id(&mut self) -> R {
        let n = self.source_name()?;
        if self.look(0) == b'I' {
            let a = self.template_args(false)?;
            return self.make(Node::Template(n, a));
        }
        Some(n)
    }

    fn base_unresolved_name(&mut self) -> R {
        if self.look(0).is_ascii_digit() {
            return self.simple_id();
        }
        if self.eat_str("dn") {
            let r = if self.look(0).is_ascii_digit() {
                self.simple_id()?
            } else {
                self.unresolved_type()?
            };
            return self.make(Node::DtorName(r));
        }
        self.eat_str("on");
        let op = self.operator_name(None)?;
        if self.look(0) == b'I' {
            let a = self.template_args(false)?;
            return self.make(Node::Template(op, a));
        }
        Some(op)
    }

    fn unresolved_name(&mut self, global: bool) -> R {
        if self.eat_str("srN") {
            let mut so_far = self.unresolved_type()?;
            if self.look(0) == b'I' {
                let a = self.template_args(false)?;
                so_far = self.make(Node::Template(so_far, a))?;
            }
            while !self.eat(b'E') {
                let q = self.simple_id()?;
                so_far = self.make(Node::Nested(so_far, q))?;
            }
            let base = self.base_unresolved_name()?;
            return self.make(Node::Nested(so_far, base));
        }
        if !self.eat_str("sr") {
            let b = self.base_unresolved_name()?;
            if global {
                return self.make(Node::Global(b));
            }
            return Some(b);
        }
        let mut so_far: Option<Id> = None;
        if self.look(0).is_ascii_digit() {
            loop {
                let q = self.simple_id()?;
                so_far = Some(match so_far {
                    Some(s) => self.make(Node::Nested(s, q))?,
                    None if global => self.make(Node::Global(q))?,
                    None => q,
                });
                if self.eat(b'E') {
                    break;
                }
            }
        } else {
            let mut s = self.unresolved_type()?;
            if self.look(0) == b'I' {
                let a = self.template_args(false)?;
                s = self.make(Node::Template(s, a))?;
            }
            so_far = Some(s);
        }
        let base = self.base_unresolved_name()?;
        self.make(Node::Nested(so_far?, base))
    }

    fn operator_encoding(&mut self) -> Option<&'static Op> {
        if self.left() < 2 {
            return None;
        }
        let code = [self.look(0), self.look(1)];
        let op = OPS.iter().find(|o| o.code.as_bytes() == code)?;
        self.pos += 2;
        Some(op)
    }
}

enum DType {
    Fixed(&'static str),
    Done(Id),
    Sub(Id),
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Kind {
    Prefix,
    Postfix,
    Binary,
    Array,
    Member,
    New,
    Del,
    Call,
    CCast,
    Conditional,
    NameOnly,
    NamedCast,
    OfIdOp,
}

struct Op {
    code: &'static str,
    kind: Kind,
    flag: bool,
    prec: Prec,
    name: &'static str,
}

impl Op {
    /// The operator as written in an expression (`+`, `sizeof `).
    fn symbol(&self) -> &'static str {
        if self.kind < Kind::NamedCast {
            let s = self.name.strip_prefix("operator").unwrap_or(self.name);
            s.strip_prefix(' ').unwrap_or(s)
        } else {
            self.name
        }
    }
}

macro_rules! op {
    ($code:literal, $kind:ident, $flag:literal, $prec:ident, $name:literal) => {
        Op {
            code: $code,
            kind: Kind::$kind,
            flag: $flag,
            prec: Prec::$prec,
            name: $name,
        }
    };
}

static OPS: [Op; 63] = [
    op!("aN", Binary, false, Assign, "operator&="),
    op!("aS", Binary, false, Assign, "operator="),
    op!("aa", Binary, false, AndIf, "operator&&"),
    op!("ad", Prefix, false, Unary, "operator&"),
    op!("an", Binary, false, And, "operator&"),
    op!("at", OfIdOp, true, Unary, "alignof "),
    op!("aw", NameOnly, false, Primary, "operator co_await"),
    op!("az", OfIdOp, false, Unary, "alignof "),
    op!("cc", NamedCast, false, Postfix, "const_cast"),
    op!("cl", Call, false, Postfix, "operator()"),
    op!("cm", Binary, false, Comma, "operator,"),
    op!("co", Prefix, false, Unary, "operator~"),
    op!("cp", Call, true, Postfix, "operator()"),
    op!("cv", CCast, false, Cast, "operator"),
    op!("dV", Binary, false, Assign, "operator/="),
    op!("da", Del, true, Unary, "operator delete[]"),
    op!("dc", NamedCast, false, Postfix, "dynamic_cast"),
    op!("de", Prefix, false, Unary, "operator*"),
    op!("dl", Del, false, Unary, "operator delete"),
    op!("ds", Member, false, PtrMem, "operator.*"),
    op!("dt", Member, false, Postfix, "operator."),
    op!("dv", Binary, false, Assign, "operator/"),
    op!("eO", Binary, false, Assign, "operator^="),
    op!("eo", Binary, false, Xor, "operator^"),
    op!("eq", Binary, false, Equality, "operator=="),
    op!("ge", Binary, false, Relational, "operator>="),
    op!("gt", Binary, false, Relational, "operator>"),
    op!("ix", Array, false, Postfix, "operator[]"),
    op!("lS", Binary, false, Assign, "operator<<="),
    op!("le", Binary, false, Relational, "operator<="),
    op!("ls", Binary, false, Shift, "operator<<"),
    op!("lt", Binary, false, Relational, "operator<"),
    op!("mI", Binary, false, Assign, "operator-="),
    op!("mL", Binary, false, Assign, "operator*="),
    op!("mi", Binary, false, Additive, "operator-"),
    op!("ml", Binary, false, Multiplicative, "operator*"),
    op!("mm", Postfix, false, Postfix, "operator--"),
    op!("na", New, true, Unary, "operator new[]"),
    op!("ne", Binary, false, Equality, "operator!="),
    op!("ng", Prefix, false, Unary, "operator-"),
    op!("nt", Prefix, false, Unary, "operator!"),
    op!("nw", New, false, Unary, "operator new"),
    op!("oR", Binary, false, Assign, "operator|="),
    op!("oo", Binary, false, OrIf, "operator||"),
    op!("or", Binary, false, Ior, "operator|"),
    op!("pL", Binary, false, Assign, "operator+="),
    op!("pl", Binary, false, Additive, "operator+"),
    op!("pm", Member, true, PtrMem, "operator->*"),
    op!("pp", Postfix, false, Postfix, "operator++"),
    op!("ps", Prefix, false, Unary, "operator+"),
    op!("pt", Member, true, Postfix, "operator->"),
    op!("qu", Conditional, false, Conditional, "operator?"),
    op!("rM", Binary, false, Assign, "operator%="),
    op!("rS", Binary, false, Assign, "operator>>="),
    op!("rc", NamedCast, false, Postfix, "reinterpret_cast"),
    op!("rm", Binary, false, Multiplicative, "operator%"),
    op!("rs", Binary, false, Shift, "operator>>"),
    op!("sc", NamedCast, false, Postfix, "static_cast"),
    op!("ss", Binary, false, Spaceship, "operator<=>"),
    op!("st", OfIdOp, true, Unary, "sizeof "),
    op!("sz", OfIdOp, false, Unary, "sizeof "),
    op!("te", OfIdOp, false, Postfix, "typeid "),
    op!("ti", OfIdOp, true, Postfix, "typeid "),
];
