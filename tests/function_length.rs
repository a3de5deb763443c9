//! No function in `src/codegen/` runs past 150 lines (issue 34: operators as units). A
//! function is counted from its `fn` line to the closing brace at the same indentation, as
//! rustfmt lays it out. `src/exec/` is measured and printed, not yet held to the limit.

use std::path::{Path, PathBuf};

const LIMIT: usize = 150;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `(name, first line, lines)` of every function with a body in `text`.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = vec![];
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let mut words = trimmed.split_whitespace();
        let mut is_fn = false;
        while let Some(w) = words.next() {
            match w {
                "pub" | "const" | "async" | "unsafe" | "extern" | "\"C\"" => {}
                w if w.starts_with("pub(") => {}
                "fn" => {
                    is_fn = true;
                    break;
                }
                _ => break,
            }
        }
        let Some(name) = words.next().filter(|_| is_fn) else { continue };
        let name: String = name.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        // No body (a trait's declaration), a one-line body, or the closing brace at the fn's
        // indentation.
        if trimmed.ends_with(';') {
            continue;
        }
        if trimmed.ends_with('}') {
            out.push((name, i + 1, 1));
            continue;
        }
        let close = format!("{indent}}}");
        if let Some(n) = lines[i..].iter().position(|l| *l == close) {
            out.push((name, i + 1, n + 1));
        }
    }
    out
}

fn longest(dir: &str) -> Vec<(usize, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files = vec![];
    rust_files(&root, &mut files);
    let mut all = vec![];
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let rel = f.strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap_or(&f).display().to_string();
        all.extend(functions(&text).into_iter().map(|(name, line, n)| (n, format!("{rel}:{line} {name}"))));
    }
    all.sort_by(|a, b| b.cmp(a));
    all
}

#[test]
fn codegen_functions_stay_under_the_limit() {
    let all = longest("src/codegen");
    assert!(all.len() > 100, "found only {} functions in src/codegen", all.len());
    println!("src/codegen: {} functions, longest {:?}", all.len(), &all[..5.min(all.len())]);
    let exec = longest("src/exec");
    println!("src/exec: {} functions, {} over {LIMIT} lines, longest {:?}", exec.len(), exec.iter().filter(|(n, _)| *n > LIMIT).count(), &exec[..5.min(exec.len())]);
    let over: Vec<String> = all.iter().filter(|(n, _)| *n > LIMIT).map(|(n, f)| format!("{f}: {n} lines")).collect();
    assert!(over.is_empty(), "functions in src/codegen over {LIMIT} lines:\n{}", over.join("\n"));
}

#[test]
fn the_counter_measures_a_function_to_its_closing_brace() {
    let text = "fn a() {\n    let x = 1;\n}\n\nimpl T {\n    pub(crate) fn b(&self) -> u8 {\n        if true {\n        }\n        0\n    }\n    fn c() {}\n}\n";
    assert_eq!(functions(text), vec![("a".to_string(), 1, 3), ("b".to_string(), 6, 5), ("c".to_string(), 11, 1)]);
}
