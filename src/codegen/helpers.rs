//! What generated code calls besides its own IR: the substring search for LIKE patterns and the
//! byte helpers of string join keys (`extern "C"`, never panicking), and the table of them a
//! stage's functions import.

use cranelift_codegen::ir::{FuncRef, GlobalValue};

use super::layout::stage_expressions;
use crate::hashtable::value_bytes_ok;
use super::spec::{string_predicate, StageSpec, StringMatch};

/// What a function may call or read besides its slots: the substring search helper and the
/// needles it searches for (the middle pieces of LIKE patterns, laid end to end in one data
/// object). Present only in stages with such a pattern.
#[derive(Clone, Default)]
pub struct Helpers {
    /// `kiln_find(haystack, haystack_len, searcher) -> index or -1`.
    pub find: Option<FuncRef>,
    /// `kiln_hash_bytes(bytes, len) -> word` and `kiln_bytes_eq(a, b, len) -> 0/1`, for string
    /// join keys.
    pub hash_bytes: Option<FuncRef>,
    pub bytes_eq: Option<FuncRef>,
    /// The needles' data object (a searcher pointer per needle), and each needle's offset in it.
    pub needles: Option<(GlobalValue, Vec<(Vec<u8>, usize)>)>,
    /// The group table's helpers: `kiln_group_grow`, `kiln_group_insert`, `kiln_bytes_equal`.
    pub group: Option<[FuncRef; 3]>,
    /// What each source location of the function stands for (operator and expression), for
    /// EXPLAIN CODEGEN's comments; None when compiling without text.
    pub notes: Option<std::cell::RefCell<Vec<String>>>,
}

/// The middle pieces of every LIKE pattern in the stage: what the search helper looks for.
pub fn like_needles(spec: &StageSpec) -> Vec<Vec<u8>> {
    let exprs = stage_expressions(spec);
    let mut needles: Vec<Vec<u8>> = vec![];
    for e in exprs {
        e.visit(&mut |x| {
            let Some(p) = string_predicate(x) else { return };
            for (bytes, kind) in &p.alternatives {
                if *kind == StringMatch::Pattern {
                    for piece in middle_pieces(bytes) {
                        if !needles.iter().any(|n| n == piece) {
                            needles.push(piece.to_vec());
                        }
                    }
                }
            }
        });
    }
    needles
}

/// The pieces of a LIKE pattern between its first and last `%`, empty ones left out.
pub(super) fn middle_pieces(pattern: &[u8]) -> Vec<&[u8]> {
    let pieces: Vec<&[u8]> = pattern.split(|c| *c == b'%').collect();
    pieces[1..pieces.len().saturating_sub(1).max(1)].iter().copied().filter(|p| !p.is_empty()).collect()
}


/// The substring search the generated code calls per value for a LIKE pattern's middle
/// pieces: the index of the searcher's needle in `haystack`, or -1. Never panics (a panic would
/// abort the process across the `extern "C"` boundary).
///
/// # Safety
/// `haystack` must point at that many readable bytes and `finder` at a live searcher (the
/// stage's needle table holds them for as long as its code lives).
pub unsafe extern "C" fn kiln_find(haystack: *const u8, haystack_len: i64, finder: *const memchr::memmem::Finder<'static>) -> i64 {
    debug_assert!(value_bytes_ok(haystack, haystack_len), "kiln_find({haystack:?}, {haystack_len})");
    let Ok(h) = usize::try_from(haystack_len) else { return -1 };
    if haystack.is_null() || finder.is_null() {
        return -1;
    }
    // SAFETY: the caller passes a value's bytes of the stated length and one of its stage's searchers.
    let (hay, finder) = unsafe { (std::slice::from_raw_parts(haystack, h), &*finder) };
    finder.find(hay).map_or(-1, |i| i as i64)
}

/// `kiln_hash_bytes`: a string join key's word, as `JoinTable` hashes it. Never panics.
///
/// # Safety
/// `bytes` must point at `len` readable bytes.
pub unsafe extern "C" fn kiln_hash_bytes(bytes: *const u8, len: i64) -> i64 {
    debug_assert!(value_bytes_ok(bytes, len), "kiln_hash_bytes({bytes:?}, {len})");
    let Ok(n) = usize::try_from(len) else { return 0 };
    if bytes.is_null() {
        return crate::hashtable::join_table::hash_bytes(&[]) as i64;
    }
    // SAFETY: the caller passes a value's bytes.
    let b = unsafe { std::slice::from_raw_parts(bytes, n) };
    crate::hashtable::join_table::hash_bytes(b) as i64
}

/// `kiln_bytes_eq`: 1 when `len` bytes at `a` and `b` are equal. Never panics.
///
/// # Safety
/// `a` and `b` must point at `len` readable bytes.
pub unsafe extern "C" fn kiln_bytes_eq(a: *const u8, b: *const u8, len: i64) -> i64 {
    debug_assert!(value_bytes_ok(a, len) && value_bytes_ok(b, len), "kiln_bytes_eq({a:?}, {b:?}, {len})");
    let Ok(n) = usize::try_from(len) else { return 0 };
    if n == 0 {
        return 1;
    }
    if a.is_null() || b.is_null() {
        return 0;
    }
    // SAFETY: the caller passes two values' bytes of this length.
    unsafe { (std::slice::from_raw_parts(a, n) == std::slice::from_raw_parts(b, n)) as i64 }
}
