//! optimizer
