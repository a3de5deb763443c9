//! analyzer
