//! Session.

/// A session.
pub struct Session {}
/// Builds a session.
pub struct SessionBuilder {}
