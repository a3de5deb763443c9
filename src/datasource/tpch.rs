//! TPC-H data generated with tpchgen-arrow.
