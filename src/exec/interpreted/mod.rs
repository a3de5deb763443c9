//! Vectorized interpreted operators over Arrow batches (Arrow compute kernels).
