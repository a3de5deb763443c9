//! No input makes kiln panic: random token soups and mutations of valid queries go through
//! parsing, analysis, optimization, planning and execution (both modes), and each ends in rows
//! or an error.

use kiln::Session;

#[path = "../fuzz/src/harness.rs"]
mod harness;
use harness::{runs_without_panic as run, Choices, Rng, TOKENS, VALID};

fn session() -> Session {
    harness::sql_session(&std::env::temp_dir())
}

#[test]
fn random_token_soup_never_panics() {
    let s = session();
    let mut rng = Rng(7);
    let mut panics = vec![];
    for _ in 0..400 {
        let n = 3 + (rng.next() % 14) as usize;
        let sql: Vec<&str> = (0..n).map(|_| *rng.pick(TOKENS)).collect();
        if let Err(e) = run(&s, &sql.join(" ")) {
            panics.push(e);
        }
    }
    assert!(panics.is_empty(), "{}", panics.join("\n"));
}

#[test]
fn mutated_valid_queries_never_panic() {
    let s = session();
    let mut rng = Rng(11);
    let mut panics = vec![];
    let mut ran = 0;
    for _ in 0..300 {
        let base = *rng.pick(VALID);
        let mut words: Vec<&str> = base.split(' ').collect();
        // Replace, drop or duplicate a word.
        let i = (rng.next() % words.len() as u64) as usize;
        match rng.next() % 3 {
            0 => words[i] = *rng.pick(TOKENS),
            1 => {
                words.remove(i);
            }
            _ => words.insert(i, *rng.pick(TOKENS)),
        }
        match run(&s, &words.join(" ")) {
            Ok(true) => ran += 1,
            Ok(false) => {}
            Err(e) => panics.push(e),
        }
    }
    assert!(panics.is_empty(), "{}", panics.join("\n"));
    // Mutations must reach execution often enough for the test to mean something.
    assert!(ran >= 20, "only {ran} mutated queries ran");
}
