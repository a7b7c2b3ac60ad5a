//! The syntax tree of a demangled Itanium name: nodes in one vector,
//! children by index, so substitutions share nodes instead of copying them.

pub(super) type Id = u32;

/// Expression precedence, tightest first: an operand whose precedence is
/// looser than its context's is printed in parentheses.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(super) enum Prec {
    Primary,
    Postfix,
    Unary,
    Cast,
    PtrMem,
    Multiplicative,
    Additive,
    Shift,
    Spaceship,
    Relational,
    Equality,
    And,
    Xor,
    Ior,
    AndIf,
    OrIf,
    Conditional,
    Assign,
    Comma,
    Default,
}

/// Whether a node prints something right of the name it declares (arrays,
/// functions), is an array, is a function: known when the node is made, or
/// only when printing (it depends on which element of a pack is printed).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Cache {
    Yes,
    No,
    Unknown,
}

pub(super) const CONST: u8 = 1;
pub(super) const VOLATILE: u8 = 2;
pub(super) const RESTRICT: u8 = 4;

pub(super) const REF_NONE: u8 = 0;
pub(super) const REF_LVALUE: u8 = 1;
pub(super) const REF_RVALUE: u8 = 2;

/// `Sa`, `Sb`, `Ss`, `Si`, `So`, `Sd`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum StdSub {
    Allocator,
    BasicString,
    String,
    Istream,
    Ostream,
    Iostream,
}

impl StdSub {
    /// The class template's own name (what a constructor is called).
    pub(super) fn base_name(self) -> &'static str {
        match self {
            StdSub::Allocator => "allocator",
            StdSub::BasicString | StdSub::String => "basic_string",
            StdSub::Istream => "basic_istream",
            StdSub::Ostream => "basic_ostream",
            StdSub::Iostream => "basic_iostream",
        }
    }

    /// The typedef's name (`std::string`), as written when not expanded.
    pub(super) fn short_name(self) -> &'static str {
        match self {
            StdSub::Allocator => "allocator",
            StdSub::BasicString => "basic_string",
            StdSub::String => "string",
            StdSub::Istream => "istream",
            StdSub::Ostream => "ostream",
            StdSub::Iostream => "iostream",
        }
    }

    pub(super) fn is_instantiation(self) -> bool {
        !matches!(self, StdSub::Allocator | StdSub::BasicString)
    }
}

#[derive(Debug)]
pub(super) enum Node<'a> {
    /// Text printed as it is: identifiers, builtin types, operator names.
    Name(&'a str),
    /// `qual::name` (nested names and qualified unresolved names).
    Nested(Id, Id),
    /// `qual::friend name`.
    Friend(Id, Id),
    /// `encoding::entity`.
    Local(Id, Id),
    /// `::name`.
    Global(Id),
    /// `name` followed by its `TemplateArgs`.
    Template(Id, Id),
    TemplateArgs(Box<[Id]>),
    AbiTag(Id, &'a str),
    CtorDtor {
        base: Id,
        dtor: bool,
    },
    /// `~T` in an unresolved name.
    DtorName(Id),
    /// `operator T`.
    Conversion(Id),
    /// `operator"" name`.
    LiteralOperator(Id),
    Unnamed(&'a str),
    Closure {
        template_params: Box<[Id]>,
        requires1: Option<Id>,
        params: Box<[Id]>,
        requires2: Option<Id>,
        count: &'a str,
    },
    Binding(Box<[Id]>),
    /// `vtable for X`, `guard variable for X`, thunks, ...
    Special(&'static str, Id),
    /// `construction vtable for A-in-B`.
    CtorVtable(Id, Id),
    Module {
        parent: Option<Id>,
        name: Id,
        partition: bool,
    },
    ModuleEntity(Id, Id),
    Qualified(Id, u8),
    VendorQualified(Id, &'a str, Option<Id>),
    /// A type followed by text: ` complex`, ` imaginary`, ` auto`.
    PostfixQualified(Id, &'static str),
    Elaborated(&'static str, Id),
    Transformed(&'a str, Id),
    Pointer(Id),
    Reference(Id, bool),
    MemberPointer(Id, Id),
    Array(Id, Option<Id>),
    Vector(Id, Option<Id>),
    PixelVector(Id),
    BinaryFloat(Id),
    BitInt(Id, bool),
    Function {
        ret: Id,
        params: Box<[Id]>,
        cv: u8,
        ref_qual: u8,
        exception: Option<Id>,
    },
    NoexceptSpec(Id),
    DynamicExceptionSpec(Box<[Id]>),
    Encoding {
        ret: Option<Id>,
        name: Id,
        params: Box<[Id]>,
        attrs: Option<Id>,
        requires: Option<Id>,
        cv: u8,
        ref_qual: u8,
    },
    ExplicitObject(Id),
    DotSuffix(Id, &'a str),
    StdSub(StdSub),
    ExpandedStdSub(StdSub),
    /// The elements of a template argument pack, as a template parameter
    /// refers to them.
    Pack(Box<[Id]>),
    /// `J ... E` as a template argument.
    ArgPack(Box<[Id]>),
    Expansion(Id),
    /// A template parameter named before its argument (in a conversion
    /// operator's type); resolved once the arguments are parsed.
    ForwardRef {
        index: usize,
        target: Option<Id>,
    },
    SyntheticParam(u8, u32),
    TypeParamDecl(Id),
    ConstrainedParamDecl(Id, Id),
    NonTypeParamDecl(Id, Id),
    TemplateParamDecl(Id, Box<[Id]>, Option<Id>),
    ParamPackDecl(Id),
    /// A template argument with its parameter's declaration (not printed).
    QualifiedArg(Id),
    EnableIf(Box<[Id]>),
    List(Box<[Id]>),

    // Expressions.
    Binary(Id, &'static str, Id, Prec),
    Subscript(Id, Id, Prec),
    PostfixExpr(Id, &'static str, Prec),
    Conditional(Id, Id, Id, Prec),
    Member(Id, &'static str, Id, Prec),
    Enclosing(&'static str, Id, Prec),
    Cast(&'static str, Id, Id, Prec),
    SizeofPack(Id),
    Call(Id, Box<[Id]>, bool, Prec),
    New {
        exprs: Box<[Id]>,
        ty: Id,
        inits: Box<[Id]>,
        global: bool,
        array: bool,
        prec: Prec,
    },
    Delete(Id, bool, bool, Prec),
    Prefix(&'static str, Id, Prec),
    FunctionParam(&'a str),
    ConversionExpr(Id, Box<[Id]>, Prec),
    MemberConversion(Id, Id, Prec),
    InitList(Option<Id>, Box<[Id]>),
    Braced(Id, Id, bool),
    BracedRange(Id, Id, Id),
    Fold {
        left: bool,
        op: &'static str,
        pack: Id,
        init: Option<Id>,
    },
    Throw(Id),
    Bool(bool),
    StringLiteral(Id),
    Lambda(Id),
    EnumLiteral(Id, &'a str),
    IntegerLiteral(&'static str, &'a str),
    FloatLiteral(u8, &'a str),
    Subobject {
        ty: Id,
        expr: Id,
        offset: &'a str,
    },
}

impl Node<'_> {
    pub(super) fn prec(&self) -> Prec {
        match *self {
            Node::Binary(.., p)
            | Node::Subscript(.., p)
            | Node::PostfixExpr(.., p)
            | Node::Conditional(.., p)
            | Node::Member(.., p)
            | Node::Enclosing(.., p)
            | Node::Cast(.., p)
            | Node::Call(.., p)
            | Node::Delete(.., p)
            | Node::Prefix(.., p)
            | Node::ConversionExpr(.., p)
            | Node::MemberConversion(.., p) => p,
            Node::New { prec, .. } => prec,
            _ => Prec::Primary,
        }
    }
}
