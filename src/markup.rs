//! The markup lexer (skeleton; filled in by its issue).
