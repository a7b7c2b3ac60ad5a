//! The context state machine (skeleton; filled in by its issue).
