//! The streaming filter loop (skeleton; filled in by its issue).
