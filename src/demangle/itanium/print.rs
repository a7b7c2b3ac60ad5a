//! Print a parsed name the way LLVM's demangler prints it: types split in a
//! left and a right part (`void (*)(int)`), `const` after the type, `>>`
//! closing nested templates, `'lambda'(int)`, `2ul`, empty packs dropped.
//!
//! The printing conventions follow LLVM's demangler (Apache-2.0 WITH
//! LLVM-exception), whose output is the reference this one must match.
//!
//! Bounded: output size, recursion depth and the number of steps are
//! limited (a small mangled name can describe an exponentially large one);
//! past a limit the name is "not demangled".

use super::ast::*;

const MAX_DEPTH: u32 = 384;
const MAX_STEPS: u64 = 1 << 22;
const UNSET: u32 = u32::MAX;

pub(super) struct Printer<'p, 'a> {
    nodes: &'p [Node<'a>],
    caches: &'p [[Cache; 3]],
    pub(super) out: String,
    limit: usize,
    pack_index: u32,
    pack_max: u32,
    /// Zero while printing template arguments, where `>` must be
    /// parenthesized; each open parenthesis adds one.
    gt_is_gt: u32,
    depth: u32,
    steps: u64,
    pub(super) failed: bool,
    busy: Vec<bool>,
}

impl<'p, 'a> Printer<'p, 'a> {
    pub(super) fn new(nodes: &'p [Node<'a>], caches: &'p [[Cache; 3]], limit: usize) -> Self {
        Printer {
            nodes,
            caches,
            out: String::new(),
            limit,
            pack_index: UNSET,
            pack_max: UNSET,
            gt_is_gt: 1,
            depth: 0,
            steps: 0,
            failed: false,
            busy: vec![false; nodes.len()],
        }
    }

    fn s(&mut self, text: &str) {
        if self.out.len() + text.len() > self.limit {
            self.failed = true;
            return;
        }
        self.out.push_str(text);
    }

    fn open(&mut self) {
        self.gt_is_gt += 1;
        self.s("(");
    }

    fn close(&mut self) {
        self.gt_is_gt -= 1;
        self.s(")");
    }

    fn enter(&mut self) -> bool {
        self.steps += 1;
        self.depth += 1;
        if self.depth > MAX_DEPTH || self.steps > MAX_STEPS {
            self.failed = true;
        }
        !self.failed
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    pub(super) fn print(&mut self, id: Id) {
        self.left(id);
        if self.caches[id as usize][0] != Cache::No {
            self.right(id);
        }
    }

    fn operand(&mut self, id: Id, prec: Prec, strictly: bool) {
        let p = self.nodes[id as usize].prec();
        let paren = (p as u32) >= (prec as u32) + (strictly as u32);
        if paren {
            self.open();
        }
        self.print(id);
        if paren {
            self.close();
        }
    }

    fn list(&mut self, items: &[Id]) {
        let mut first = true;
        for &item in items {
            let before = self.out.len();
            if !first {
                self.s(", ");
            }
            let after = self.out.len();
            self.operand(item, Prec::Comma, false);
            if self.out.len() == after {
                self.out.truncate(before);
                continue;
            }
            first = false;
        }
    }

    fn init_pack(&mut self, len: usize) {
        if self.pack_max == UNSET {
            self.pack_max = len.min(UNSET as usize - 1) as u32;
            self.pack_index = 0;
        }
    }

    /// The pack element being printed, if `id` is a pack.
    fn pack_element(&mut self, items: &[Id]) -> Option<Id> {
        self.init_pack(items.len());
        items.get(self.pack_index as usize).copied()
    }

    fn has(&mut self, id: Id, which: usize) -> bool {
        match self.caches[id as usize][which] {
            Cache::Yes => return true,
            Cache::No => return false,
            Cache::Unknown => {}
        }
        if !self.enter() {
            return false;
        }
        let r = match &self.nodes[id as usize] {
            Node::Pack(items) => match self.pack_element(items) {
                Some(e) => self.has(e, which),
                None => false,
            },
            &Node::ForwardRef { target, .. } => {
                if self.busy[id as usize] {
                    false
                } else {
                    self.busy[id as usize] = true;
                    let r = target.is_some_and(|t| self.has(t, which));
                    self.busy[id as usize] = false;
                    r
                }
            }
            &Node::Qualified(c, _) | &Node::AbiTag(c, _) => self.has(c, which),
            &Node::Pointer(c) | &Node::Reference(c, _) if which == 0 => self.has(c, 0),
            &Node::MemberPointer(_, m) if which == 0 => self.has(m, 0),
            _ => false,
        };
        self.leave();
        r
    }

    fn has_rhs(&mut self, id: Id) -> bool {
        self.has(id, 0)
    }

    fn has_array(&mut self, id: Id) -> bool {
        self.has(id, 1)
    }

    fn has_function(&mut self, id: Id) -> bool {
        self.has(id, 2)
    }

    /// Through packs and forward references to the node printed.
    fn syntax_node(&mut self, id: Id) -> Id {
        match &self.nodes[id as usize] {
            Node::Pack(items) => match self.pack_element(items) {
                Some(e) => self.syntax_node(e),
                None => id,
            },
            &Node::ForwardRef { target, .. } => {
                if self.busy[id as usize] {
                    return id;
                }
                match target {
                    Some(t) => {
                        self.busy[id as usize] = true;
                        let r = self.syntax_node(t);
                        self.busy[id as usize] = false;
                        r
                    }
                    None => id,
                }
            }
            _ => id,
        }
    }

    fn base_name(&self, id: Id) -> &'a str {
        let mut id = id;
        loop {
            match self.nodes[id as usize] {
                Node::Name(s) => return s,
                Node::Nested(_, n)
                | Node::Friend(_, n)
                | Node::ModuleEntity(_, n)
                | Node::Global(n)
                | Node::Template(n, _)
                | Node::AbiTag(n, _) => id = n,
                Node::ExpandedStdSub(k) => return k.base_name(),
                Node::StdSub(k) => return k.short_name(),
                _ => return "",
            }
        }
    }

    /// (collapsed reference kind: rvalue?, referee), or None on a cycle.
    fn collapse(&mut self, rvalue: bool, pointee: Id) -> Option<(bool, Id)> {
        let mut kind = rvalue;
        let mut cur = pointee;
        let mut seen = 0u32;
        loop {
            let sn = self.syntax_node(cur);
            let Node::Reference(p, rv) = self.nodes[sn as usize] else {
                break;
            };
            cur = p;
            kind = kind && rv;
            seen += 1;
            if seen > 4096 {
                return None;
            }
        }
        Some((kind, cur))
    }

    fn quals(&mut self, q: u8) {
        if q & CONST != 0 {
            self.s(" const");
        }
        if q & VOLATILE != 0 {
            self.s(" volatile");
        }
        if q & RESTRICT != 0 {
            self.s(" restrict");
        }
    }

    fn ref_qual(&mut self, r: u8) {
        match r {
            REF_LVALUE => self.s(" &"),
            REF_RVALUE => self.s(" &&"),
            _ => {}
        }
    }

    fn template_args(&mut self, args: &[Id]) {
        let saved = self.gt_is_gt;
        self.gt_is_gt = 0;
        self.s("<");
        self.list(args);
        self.s(">");
        self.gt_is_gt = saved;
    }

    fn number_text(&mut self, n: &str) {
        match n.strip_prefix('n') {
            Some(rest) => {
                self.s("-");
                self.s(rest);
            }
            None => self.s(n),
        }
    }

    pub(super) fn left(&mut self, id: Id) {
        if !self.enter() {
            return;
        }
        let nodes = self.nodes;
        match &nodes[id as usize] {
            Node::Name(s) => self.s(s),
            &Node::Nested(q, n) => {
                self.print(q);
                self.s("::");
                self.print(n);
            }
            &Node::Friend(q, n) => {
                self.print(q);
                self.s("::friend ");
                self.print(n);
            }
            &Node::Local(e, n) => {
                self.print(e);
                self.s("::");
                self.print(n);
            }
            &Node::Global(c) => {
                self.s("::");
                self.print(c);
            }
            &Node::Template(n, a) => {
                self.print(n);
                self.print(a);
            }
            Node::TemplateArgs(args) => self.template_args(args),
            &Node::AbiTag(b, tag) => {
                self.left(b);
                self.s("[abi:");
                self.s(tag);
                self.s("]");
            }
            &Node::CtorDtor { base, dtor } => {
                if dtor {
                    self.s("~");
                }
                let b = self.base_name(base);
                self.s(b);
            }
            &Node::DtorName(b) => {
                self.s("~");
                self.left(b);
            }
            &Node::Conversion(t) => {
                self.s("operator ");
                self.print(t);
            }
            &Node::LiteralOperator(n) => {
                self.s("operator\"\" ");
                self.print(n);
            }
            Node::Unnamed(count) => {
                self.s("'unnamed");
                self.s(count);
                self.s("'");
            }
            Node::Closure { count, .. } => {
                self.s("'lambda");
                self.s(count);
                self.s("'");
                self.declarator(id);
            }
            Node::Binding(names) => {
                self.gt_is_gt += 1;
                self.s("[");
                self.list(names);
                self.gt_is_gt -= 1;
                self.s("]");
            }
            &Node::Special(text, c) => {
                self.s(text);
                self.print(c);
            }
            &Node::CtorVtable(a, b) => {
                self.s("construction vtable for ");
                self.print(a);
                self.s("-in-");
                self.print(b);
            }
            &Node::Module {
                parent,
                name,
                partition,
            } => {
                if let Some(p) = parent {
                    self.print(p);
                }
                if parent.is_some() || partition {
                    self.s(if partition { ":" } else { "." });
                }
                self.print(name);
            }
            &Node::ModuleEntity(m, n) => {
                self.print(n);
                self.s("@");
                self.print(m);
            }
            &Node::Qualified(c, q) => {
                self.left(c);
                self.quals(q);
            }
            &Node::VendorQualified(t, ext, args) => {
                self.print(t);
                self.s(" ");
                self.s(ext);
                if let Some(a) = args {
                    self.print(a);
                }
            }
            &Node::PostfixQualified(t, text) => {
                self.left(t);
                self.s(text);
            }
            &Node::Elaborated(kind, c) => {
                self.s(kind);
                self.s(" ");
                self.print(c);
            }
            &Node::Transformed(t, b) => {
                self.s(t);
                self.s("(");
                self.print(b);
                self.s(")");
            }
            &Node::Pointer(p) => {
                self.left(p);
                let arr = self.has_array(p);
                if arr {
                    self.s(" ");
                }
                if arr || self.has_function(p) {
                    self.s("(");
                }
                self.s("*");
            }
            &Node::Reference(p, rv) => {
                if self.busy[id as usize] {
                    self.leave();
                    return;
                }
                self.busy[id as usize] = true;
                if let Some((rv, target)) = self.collapse(rv, p) {
                    self.left(target);
                    let arr = self.has_array(target);
                    if arr {
                        self.s(" ");
                    }
                    if arr || self.has_function(target) {
                        self.s("(");
                    }
                    self.s(if rv { "&&" } else { "&" });
                }
                self.busy[id as usize] = false;
            }
            &Node::MemberPointer(class, member) => {
                self.left(member);
                if self.has_array(member) || self.has_function(member) {
                    self.s("(");
                } else {
                    self.s(" ");
                }
                self.print(class);
                self.s("::*");
            }
            &Node::Array(base, _) => self.left(base),
            &Node::Vector(base, dim) => {
                self.print(base);
                self.s(" vector[");
                if let Some(d) = dim {
                    self.print(d);
                }
                self.s("]");
            }
            &Node::PixelVector(dim) => {
                self.s("pixel vector[");
                self.print(dim);
                self.s("]");
            }
            &Node::BinaryFloat(dim) => {
                self.s("_Float");
                self.print(dim);
            }
            &Node::BitInt(size, signed) => {
                if !signed {
                    self.s("unsigned ");
                }
                self.s("_BitInt");
                self.open();
                self.operand(size, Prec::Default, false);
                self.close();
            }
            &Node::Function { ret, .. } => {
                self.left(ret);
                self.s(" ");
            }
            &Node::NoexceptSpec(e) => {
                self.s("noexcept");
                self.open();
                self.operand(e, Prec::Default, false);
                self.close();
            }
            Node::DynamicExceptionSpec(types) => {
                self.s("throw");
                self.open();
                self.list(types);
                self.close();
            }
            &Node::Encoding { ret, name, .. } => {
                if let Some(r) = ret {
                    self.left(r);
                    if !self.has_rhs(r) {
                        self.s(" ");
                    }
                }
                self.print(name);
            }
            &Node::ExplicitObject(b) => {
                self.s("this ");
                self.print(b);
            }
            &Node::DotSuffix(p, suffix) => {
                self.print(p);
                self.s(" (");
                self.s(suffix);
                self.s(")");
            }
            &Node::StdSub(k) => {
                self.s("std::");
                self.s(k.short_name());
            }
            &Node::ExpandedStdSub(k) => {
                self.s("std::");
                self.s(k.base_name());
                if k.is_instantiation() {
                    self.s("<char, std::char_traits<char>");
                    if k == StdSub::String {
                        self.s(", std::allocator<char>");
                    }
                    self.s(">");
                }
            }
            Node::Pack(items) => {
                if let Some(e) = self.pack_element(items) {
                    self.left(e);
                }
            }
            Node::ArgPack(items) | Node::List(items) => self.list(items),
            &Node::Expansion(child) => self.expansion(child),
            &Node::ForwardRef { target, .. } => {
                if !self.busy[id as usize]
                    && let Some(t) = target
                {
                    self.busy[id as usize] = true;
                    self.left(t);
                    self.busy[id as usize] = false;
                }
            }
            &Node::SyntheticParam(kind, index) => {
                self.s(["$T", "$N", "$TT"][kind as usize]);
                if index > 0 {
                    self.s(&(index - 1).to_string());
                }
            }
            Node::TypeParamDecl(_) => self.s("typename "),
            &Node::ConstrainedParamDecl(c, _) => {
                self.print(c);
                self.s(" ");
            }
            &Node::NonTypeParamDecl(_, t) => {
                self.left(t);
                if !self.has_rhs(t) {
                    self.s(" ");
                }
            }
            Node::TemplateParamDecl(_, params, _) => {
                let saved = self.gt_is_gt;
                self.gt_is_gt = 0;
                self.s("template<");
                self.list(params);
                self.s("> typename ");
                self.gt_is_gt = saved;
            }
            &Node::ParamPackDecl(p) => {
                self.left(p);
                self.s("...");
            }
            &Node::QualifiedArg(a) => self.print(a),
            Node::EnableIf(conds) => {
                self.s(" [enable_if:");
                self.list(conds);
                self.s("]");
            }
            &Node::Binary(l, op, r, prec) => {
                let paren_all = self.gt_is_gt == 0 && (op == ">" || op == ">>");
                if paren_all {
                    self.open();
                }
                let assign = prec == Prec::Assign;
                self.operand(l, if assign { Prec::OrIf } else { prec }, !assign);
                if op != "," {
                    self.s(" ");
                }
                self.s(op);
                self.s(" ");
                self.operand(r, prec, assign);
                if paren_all {
                    self.close();
                }
            }
            &Node::Subscript(a, b, prec) => {
                self.operand(a, prec, false);
                self.gt_is_gt += 1;
                self.s("[");
                self.operand(b, Prec::Default, false);
                self.gt_is_gt -= 1;
                self.s("]");
            }
            &Node::PostfixExpr(c, op, prec) => {
                self.operand(c, prec, true);
                self.s(op);
            }
            &Node::Conditional(c, t, e, prec) => {
                self.operand(c, prec, false);
                self.s(" ? ");
                self.operand(t, Prec::Default, false);
                self.s(" : ");
                self.operand(e, Prec::Assign, true);
            }
            &Node::Member(l, kind, r, prec) => {
                self.operand(l, prec, true);
                self.s(kind);
                self.operand(r, prec, false);
            }
            &Node::Enclosing(prefix, inner, _) => {
                self.s(prefix);
                self.open();
                self.print(inner);
                self.close();
            }
            &Node::Cast(kind, to, from, _) => {
                self.s(kind);
                let saved = self.gt_is_gt;
                self.gt_is_gt = 0;
                self.s("<");
                self.left(to);
                self.s(">");
                self.gt_is_gt = saved;
                self.open();
                self.operand(from, Prec::Default, false);
                self.close();
            }
            &Node::SizeofPack(p) => {
                self.s("sizeof...");
                self.open();
                self.expansion(p);
                self.close();
            }
            Node::Call(callee, args, paren, _) => {
                if *paren {
                    self.open();
                }
                self.print(*callee);
                if *paren {
                    self.close();
                }
                self.open();
                self.list(args);
                self.close();
            }
            Node::New {
                exprs,
                ty,
                inits,
                global,
                array,
                ..
            } => {
                if *global {
                    self.s("::");
                }
                self.s("new");
                if *array {
                    self.s("[]");
                }
                if !exprs.is_empty() {
                    self.open();
                    self.list(exprs);
                    self.close();
                }
                self.s(" ");
                self.print(*ty);
                if !inits.is_empty() {
                    self.open();
                    self.list(inits);
                    self.close();
                }
            }
            &Node::Delete(op, global, array, _) => {
                if global {
                    self.s("::");
                }
                self.s("delete");
                if array {
                    self.s("[]");
                }
                self.s(" ");
                self.print(op);
            }
            &Node::Prefix(prefix, c, prec) => {
                self.s(prefix);
                self.operand(c, prec, false);
            }
            Node::FunctionParam(n) => {
                self.s("fp");
                self.s(n);
            }
            Node::ConversionExpr(t, exprs, _) => {
                self.open();
                self.print(*t);
                self.close();
                self.open();
                self.list(exprs);
                self.close();
            }
            &Node::MemberConversion(t, e, _) => {
                self.open();
                self.print(t);
                self.close();
                self.open();
                self.print(e);
                self.close();
            }
            Node::InitList(ty, inits) => {
                if let Some(t) = *ty {
                    if self.init_list_as_string(t, inits) {
                        self.leave();
                        return;
                    }
                    self.print(t);
                }
                self.s("{");
                self.list(inits);
                self.s("}");
            }
            &Node::Braced(elem, init, array) => {
                if array {
                    self.s("[");
                    self.print(elem);
                    self.s("]");
                } else {
                    self.s(".");
                    self.print(elem);
                }
                if !matches!(
                    self.nodes[init as usize],
                    Node::Braced(..) | Node::BracedRange(..)
                ) {
                    self.s(" = ");
                }
                self.print(init);
            }
            &Node::BracedRange(a, b, init) => {
                self.s("[");
                self.print(a);
                self.s(" ... ");
                self.print(b);
                self.s("]");
                if !matches!(
                    self.nodes[init as usize],
                    Node::Braced(..) | Node::BracedRange(..)
                ) {
                    self.s(" = ");
                }
                self.print(init);
            }
            &Node::Fold {
                left,
                op,
                pack,
                init,
            } => {
                self.open();
                if !left || init.is_some() {
                    if left {
                        if let Some(i) = init {
                            self.operand(i, Prec::Cast, true);
                        }
                    } else {
                        self.fold_pack(pack);
                    }
                    self.s(" ");
                    self.s(op);
                    self.s(" ");
                }
                self.s("...");
                if left || init.is_some() {
                    self.s(" ");
                    self.s(op);
                    self.s(" ");
                    if left {
                        self.fold_pack(pack);
                    } else if let Some(i) = init {
                        self.operand(i, Prec::Cast, true);
                    }
                }
                self.close();
            }
            &Node::Throw(e) => {
                self.s("throw ");
                self.print(e);
            }
            &Node::Bool(b) => self.s(if b { "true" } else { "false" }),
            &Node::StringLiteral(t) => {
                self.s("\"<");
                self.print(t);
                self.s(">\"");
            }
            &Node::Lambda(t) => {
                self.s("[]");
                if matches!(self.nodes[t as usize], Node::Closure { .. }) {
                    self.declarator(t);
                }
                self.s("{...}");
            }
            &Node::EnumLiteral(t, n) => {
                self.open();
                self.print(t);
                self.close();
                self.number_text(n);
            }
            &Node::IntegerLiteral(ty, v) => {
                if ty.len() > 3 {
                    self.open();
                    self.s(ty);
                    self.close();
                }
                self.number_text(v);
                if ty.len() <= 3 {
                    self.s(ty);
                }
            }
            &Node::FloatLiteral(kind, data) => match super::float::format(kind, data) {
                Some(text) => self.s(&text),
                None => self.failed = true,
            },
            &Node::Subobject { ty, expr, offset } => {
                self.print(expr);
                self.s(".<");
                self.print(ty);
                self.s(" at offset ");
                if offset.is_empty() {
                    self.s("0");
                } else {
                    self.number_text(offset);
                }
                self.s(">");
            }
        }
        self.leave();
    }

    pub(super) fn right(&mut self, id: Id) {
        if !self.enter() {
            return;
        }
        let nodes = self.nodes;
        match &nodes[id as usize] {
            &Node::Qualified(c, _) => self.right(c),
            &Node::Pointer(p) => {
                if self.has_array(p) || self.has_function(p) {
                    self.s(")");
                }
                self.right(p);
            }
            &Node::Reference(p, rv) if !self.busy[id as usize] => {
                self.busy[id as usize] = true;
                if let Some((_, target)) = self.collapse(rv, p) {
                    if self.has_array(target) || self.has_function(target) {
                        self.s(")");
                    }
                    self.right(target);
                }
                self.busy[id as usize] = false;
            }
            &Node::MemberPointer(_, member) => {
                if self.has_array(member) || self.has_function(member) {
                    self.s(")");
                }
                self.right(member);
            }
            &Node::Array(base, dim) => {
                if !self.out.ends_with(']') {
                    self.s(" ");
                }
                self.s("[");
                if let Some(d) = dim {
                    self.print(d);
                }
                self.s("]");
                self.right(base);
            }
            Node::Function {
                ret,
                params,
                cv,
                ref_qual,
                exception,
            } => {
                self.open();
                self.list(params);
                self.close();
                self.right(*ret);
                self.quals(*cv);
                self.ref_qual(*ref_qual);
                if let Some(e) = *exception {
                    self.s(" ");
                    self.print(e);
                }
            }
            Node::Encoding {
                ret,
                params,
                attrs,
                requires,
                cv,
                ref_qual,
                ..
            } => {
                self.open();
                self.list(params);
                self.close();
                if let Some(r) = *ret {
                    self.right(r);
                }
                self.quals(*cv);
                self.ref_qual(*ref_qual);
                if let Some(a) = *attrs {
                    self.print(a);
                }
                if let Some(r) = *requires {
                    self.s(" requires ");
                    self.print(r);
                }
            }
            Node::Pack(items) => {
                if let Some(e) = self.pack_element(items) {
                    self.right(e);
                }
            }
            &Node::ForwardRef { target, .. } => {
                if !self.busy[id as usize]
                    && let Some(t) = target
                {
                    self.busy[id as usize] = true;
                    self.right(t);
                    self.busy[id as usize] = false;
                }
            }
            &Node::TypeParamDecl(n) | &Node::ConstrainedParamDecl(_, n) => self.print(n),
            &Node::NonTypeParamDecl(n, t) => {
                self.print(n);
                self.right(t);
            }
            &Node::TemplateParamDecl(n, _, requires) => {
                self.print(n);
                if let Some(r) = requires {
                    self.s(" requires ");
                    self.print(r);
                }
            }
            &Node::ParamPackDecl(p) => self.right(p),
            _ => {}
        }
        self.leave();
    }

    fn declarator(&mut self, id: Id) {
        let Node::Closure {
            template_params,
            requires1,
            params,
            requires2,
            ..
        } = &self.nodes[id as usize]
        else {
            return;
        };
        if !template_params.is_empty() {
            let saved = self.gt_is_gt;
            self.gt_is_gt = 0;
            self.s("<");
            self.list(template_params);
            self.s(">");
            self.gt_is_gt = saved;
        }
        if let Some(r) = *requires1 {
            self.s(" requires ");
            self.print(r);
            self.s(" ");
        }
        self.open();
        self.list(params);
        self.close();
        if let Some(r) = *requires2 {
            self.s(" requires ");
            self.print(r);
        }
    }

    fn expansion(&mut self, child: Id) {
        let (saved_index, saved_max) = (self.pack_index, self.pack_max);
        self.pack_index = UNSET;
        self.pack_max = UNSET;
        let start = self.out.len();
        self.print(child);
        if self.pack_max == UNSET {
            self.s("...");
        } else if self.pack_max == 0 {
            self.out.truncate(start);
        } else {
            for i in 1..self.pack_max {
                if self.failed {
                    break;
                }
                self.s(", ");
                self.pack_index = i;
                self.print(child);
            }
        }
        self.pack_index = saved_index;
        self.pack_max = saved_max;
    }

    fn fold_pack(&mut self, pack: Id) {
        self.open();
        self.expansion(pack);
        self.close();
    }

    /// `char` arrays initialized from integer literals print as a string.
    fn init_list_as_string(&mut self, ty: Id, inits: &[Id]) -> bool {
        let Node::Array(base, _) = self.nodes[ty as usize] else {
            return false;
        };
        if !matches!(self.nodes[base as usize], Node::Name("char")) {
            return false;
        }
        let mut text = String::from("\"");
        let mut last_numeric = false;
        for &e in inits {
            let Node::IntegerLiteral(_, v) = self.nodes[e as usize] else {
                return false;
            };
            let mut value: u32 = 0;
            for c in v.bytes() {
                if !c.is_ascii_digit() || value > 25 {
                    return false;
                }
                value = value * 10 + (c - b'0') as u32;
            }
            if value > 255 {
                return false;
            }
            let ch = value as u8;
            if last_numeric && ch.is_ascii_hexdigit() {
                text.push_str("\"\"");
            }
            last_numeric = false;
            match ch {
                7 => text.push_str("\\a"),
                8 => text.push_str("\\b"),
                12 => text.push_str("\\f"),
                10 => text.push_str("\\n"),
                13 => text.push_str("\\r"),
                9 => text.push_str("\\t"),
                11 => text.push_str("\\v"),
                b'"' => text.push_str("\\\""),
                b'\\' => text.push_str("\\\\"),
                c if c < 32 || c == 127 => {
                    const HEX: &[u8; 16] = b"0123456789ABCDEF";
                    text.push('\\');
                    if c > 7 {
                        text.push('x');
                    }
                    if c >= 16 {
                        text.push(HEX[(c >> 4) as usize] as char);
                    }
                    text.push(HEX[(c & 15) as usize] as char);
                    last_numeric = true;
                }
                c => text.push(c as char),
            }
        }
        text.push('"');
        self.s(&text);
        true
    }
}
