//! The layering of `src/`: which top-level module may import which.
//!
//! Every path a source file names (`use crate::...`, `crate::a::b::f(...)` in code, `super::`,
//! `self::`, a child module's name, and `kiln::` in the command-line tool) is read from the
//! text with comments, strings and `#[cfg(test)]` items left out (test code may reach any
//! layer). Two checks:
//! - between top-level modules: no cycle, and no import of a module in a higher layer than the
//!   importer's (`LAYERS`, bottom first; modules in one layer are peers and may import each
//!   other as long as no cycle forms);
//! - between the files of one module: no cycle, except where the files are one concept
//!   (`FILE_CYCLES_ALLOWED`). A module's root file (`mod.rs`) declares and re-exports its
//!   children, so its edges to its own descendants are not counted; a child's use of what the
//!   root defines is.
//!
//! A failure names each file and the path it imports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, bottom first.
const LAYERS: &[&[&str]] = &[
    &["error"],
    &["types", "udf"],
    &["common"],
    &["format", "config"],
    &["expr"],
    &["datasource"],
    &["catalog"],
    &["plan"],
    &["stats"],
    &["analyzer"],
    &["sql"],
    &["functions"],
    &["optimizer"],
    &["physical"],
    &["extensions"],
    &["hashtable"],
    &["codegen"],
    &["exec"],
    &["explain"],
    &["dataframe"],
    &["session"],
    &["connect"],
    &["slt"],
    &["bin"],
];

/// Groups of files of one module that may import each other (one concept split in files).
const FILE_CYCLES_ALLOWED: &[&[&str]] = &[&["sql/expr.rs", "sql/query.rs"]];

/// Violations being worked off (each entry `from -> to` at module level, or a cycle's members);
/// the test fails on any violation not listed here and on any entry that no longer holds.
const KNOWN_UPWARD: &[&str] = &[];
const KNOWN_MODULE_CYCLES: &[&str] = &[];
const KNOWN_FILE_CYCLES: &[&str] = &[
    "analyzer/coercion.rs analyzer/generators.rs analyzer/resolve.rs",
    "exec/interpreted/accumulators.rs exec/interpreted/stat_accumulators.rs",
    "expr/builtins.rs expr/builtins_more.rs expr/datetime.rs expr/eval/cast.rs expr/eval/interval.rs",
    "optimizer/rules/decorrelate.rs optimizer/rules/subquery.rs",
    "types/interval.rs types/scalar.rs types/timestamp.rs",
];

#[test]
fn layers_hold() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let tree = SourceTree::read(&src);
    let graph = tree.imports();
    let layers = Layers::new(LAYERS);
    let report = check(&graph, &layers, FILE_CYCLES_ALLOWED);
    println!("{}", report.summary());
    let mut problems = vec![];
    let unknown: Vec<&String> = tree.modules.iter().filter(|m| layers.of(m).is_none()).collect();
    if !unknown.is_empty() {
        problems.push(format!("top-level modules missing from LAYERS: {unknown:?}"));
    }
    problems.extend(ratchet("upward import", &report.upward_keys(), KNOWN_UPWARD));
    problems.extend(ratchet("module cycle", &report.module_cycle_keys(), KNOWN_MODULE_CYCLES));
    problems.extend(ratchet("file cycle", &report.file_cycle_keys(), KNOWN_FILE_CYCLES));
    assert!(problems.is_empty(), "{}\n\n{}", problems.join("\n"), report.details());
}

/// New violations (not in `known`) and entries of `known` that no longer occur.
fn ratchet(what: &str, found: &BTreeSet<String>, known: &[&str]) -> Vec<String> {
    let known: BTreeSet<String> = known.iter().map(|s| s.to_string()).collect();
    let mut out = vec![];
    for f in found.difference(&known) {
        out.push(format!("new {what}: {f}"));
    }
    for k in known.difference(found) {
        out.push(format!("{what} listed as known no longer occurs (remove it from the list): {k}"));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Reading the source

/// The files of `src/` with their code (comments, strings and test items removed).
struct SourceTree {
    /// Path relative to `src/` (with `/`) -> code.
    files: BTreeMap<String, String>,
    /// Top-level module names.
    modules: BTreeSet<String>,
    /// Names `lib.rs` re-exports at the crate root -> the module they come from.
    root_names: BTreeMap<String, String>,
}

/// One import: `file` names `path`, which is in module `to` (file `to_file` when known).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Import {
    file: String,
    path: String,
    to: String,
    to_file: Option<String>,
}

impl SourceTree {
    fn read(src: &Path) -> SourceTree {
        let mut raw = BTreeMap::new();
        let mut stack = vec![src.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display())) {
                let path: PathBuf = entry.expect("a directory entry").path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let rel = path.strip_prefix(src).expect("under src").to_string_lossy().replace('\\', "/");
                    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
                    raw.insert(rel, text);
                }
            }
        }
        SourceTree::from_texts(raw)
    }

    fn from_texts(raw: BTreeMap<String, String>) -> SourceTree {
        let mut files = BTreeMap::new();
        let mut test_only: Vec<String> = vec![];
        for (rel, text) in &raw {
            let (code, test_children) = without_test_items(&strip_comments_and_strings(text));
            for child in test_children {
                let dir = child_dir(rel);
                test_only.push(format!("{dir}{child}.rs"));
                test_only.push(format!("{dir}{child}/"));
            }
            files.insert(rel.clone(), code);
        }
        files.retain(|rel, _| !test_only.iter().any(|t| rel == t || (t.ends_with('/') && rel.starts_with(t.as_str()))));
        let modules: BTreeSet<String> =
            files.keys().filter(|f| f.as_str() != "lib.rs").map(|f| top_module(f)).collect();
        let mut root_names = BTreeMap::new();
        if let Some(lib) = files.get("lib.rs") {
            for p in paths_in(lib) {
                if p.in_use && p.segments.len() >= 2 && modules.contains(&p.segments[0]) {
                    root_names.insert(p.segments.last().expect("two segments").clone(), p.segments[0].clone());
                }
            }
        }
        SourceTree { files, modules, root_names }
    }

    /// Every import between files of the crate.
    fn imports(&self) -> Vec<Import> {
        let mut out = BTreeSet::new();
        for (rel, code) in &self.files {
            if rel == "lib.rs" {
                continue;
            }
            let here = module_path(rel);
            let bin = rel.starts_with("bin/");
            for p in paths_in(code) {
                let Some(abs) = self.absolute(&here, bin, &p) else { continue };
                let Some(first) = abs.first() else { continue };
                let to = if self.modules.contains(first) {
                    first.clone()
                } else if let Some(m) = self.root_names.get(first) {
                    m.clone()
                } else {
                    continue;
                };
                let to_file = self.file_of(&abs);
                if bin && to == "bin" {
                    continue;
                }
                out.insert(Import { file: rel.clone(), path: p.segments.join("::"), to, to_file });
            }
        }
        out.into_iter().collect()
    }

    /// The crate-absolute segments a path names, if it names something in the crate.
    fn absolute(&self, here: &[String], bin: bool, p: &PathRef) -> Option<Vec<String>> {
        let s = &p.segments;
        match s.first()?.as_str() {
            "kiln" if bin => Some(s[1..].to_vec()),
            "crate" if !bin => Some(s[1..].to_vec()),
            "self" if !bin => Some(here.iter().cloned().chain(s[1..].iter().cloned()).collect()),
            "super" if !bin => {
                let ups = s.iter().take_while(|x| *x == "super").count();
                let base = here.len().checked_sub(ups)?;
                Some(here[..base].iter().cloned().chain(s[ups..].iter().cloned()).collect())
            }
            child if !bin && s.len() >= 2 => {
                // A child module named without `self::` (edition 2018 paths).
                let mut abs: Vec<String> = here.to_vec();
                abs.push(child.to_string());
                self.is_module(&abs).then(|| here.iter().cloned().chain(s.iter().cloned()).collect())
            }
            _ => None,
        }
    }

    fn is_module(&self, segments: &[String]) -> bool {
        let base = segments.join("/");
        self.files.contains_key(&format!("{base}.rs")) || self.files.contains_key(&format!("{base}/mod.rs"))
    }

    /// The file the longest module prefix of `abs` lives in.
    fn file_of(&self, abs: &[String]) -> Option<String> {
        (1..=abs.len()).rev().find_map(|n| {
            let base = abs[..n].join("/");
            [format!("{base}.rs"), format!("{base}/mod.rs")].into_iter().find(|f| self.files.contains_key(f))
        })
    }
}

/// `a/b/c.rs` -> `[a, b, c]`, `a/b/mod.rs` -> `[a, b]`, `bin/...` -> `[bin]`.
fn module_path(rel: &str) -> Vec<String> {
    if rel.starts_with("bin/") {
        return vec!["bin".into()];
    }
    let mut parts: Vec<String> = rel.trim_end_matches(".rs").split('/').map(String::from).collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

fn top_module(rel: &str) -> String {
    module_path(rel).first().cloned().unwrap_or_default()
}

/// The folder a file's child modules live in: `a/mod.rs` -> `a/`, `a/b.rs` -> `a/b/`.
fn child_dir(rel: &str) -> String {
    match rel.rsplit_once('/') {
        Some((dir, "mod.rs")) => format!("{dir}/"),
        _ if rel == "lib.rs" => String::new(),
        _ => format!("{}/", rel.trim_end_matches(".rs")),
    }
}

/// The text with comments removed and each string or character literal replaced by `""`.
fn strip_comments_and_strings(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    while i < c.len() {
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if (c[i] == 'r' || (c[i] == 'b' && c.get(i + 1) == Some(&'r')))
            && (i == 0 || !ident(c[i - 1]))
            && {
                let mut j = i + if c[i] == 'b' { 2 } else { 1 };
                while c.get(j) == Some(&'#') {
                    j += 1;
                }
                c.get(j) == Some(&'"')
            }
        {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + if c[i] == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while c[j] == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            loop {
                if j >= c.len() {
                    break;
                }
                if c[j] == '"' && (0..hashes).all(|k| c.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c[i] == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c[i] == '\'' {
            // A character literal ('x', '\n', '\u{1F600}'), or else a lifetime or label.
            if c.get(i + 1) == Some(&'\\') {
                let mut j = i + 2;
                while j < c.len() && c[j] != '\'' {
                    j += 1;
                }
                out.push_str("' '");
                i = j + 1;
            } else if c.get(i + 2) == Some(&'\'') {
                out.push_str("' '");
                i += 3;
            } else {
                out.push('\'');
                i += 1;
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// The code without `#[cfg(test)]` items, and the names of child modules declared
/// `#[cfg(test)] mod name;` (whose files are test code).
fn without_test_items(code: &str) -> (String, Vec<String>) {
    const ATTR: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut children = vec![];
    let mut rest = code;
    while let Some(at) = rest.find(ATTR) {
        out.push_str(&rest[..at]);
        let item = &rest[at + ATTR.len()..];
        // The item ends at its first `;` outside brackets, or at the brace closing its body.
        let b = item.as_bytes();
        let mut depth = 0i32;
        let mut end = b.len();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                b'{' if depth == 0 => {
                    let mut braces = 0;
                    while i < b.len() {
                        match b[i] {
                            b'{' => braces += 1,
                            b'}' => {
                                braces -= 1;
                                if braces == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        i += 1;
                    }
                    end = (i + 1).min(b.len());
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        let text = &item[..end];
        let words: Vec<&str> = text.split(|ch: char| !(ch.is_alphanumeric() || ch == '_')).filter(|w| !w.is_empty()).collect();
        if text.trim_end().ends_with(';') {
            if let Some(pos) = words.iter().position(|w| *w == "mod") {
                if let Some(name) = words.get(pos + 1) {
                    children.push(name.to_string());
                }
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    (out, children)
}

/// A path named in code: its segments (`crate`, `super`, ... included), and whether it is in a
/// `use` item.
#[derive(Debug)]
struct PathRef {
    segments: Vec<String>,
    in_use: bool,
}

/// Every path of two or more segments in `code` (a `use` group `a::{b, c::d}` gives `a::b` and
/// `a::c::d`).
fn paths_in(code: &str) -> Vec<PathRef> {
    let tokens = tokenize(code);
    let mut out = vec![];
    let mut i = 0;
    let mut in_use = false;
    while i < tokens.len() {
        let t = tokens[i].as_str();
        if t == "use" {
            in_use = true;
            i += 1;
            continue;
        }
        if t == ";" {
            in_use = false;
        }
        let starts_path = is_ident(t) && tokens.get(i + 1).is_some_and(|n| n == "::") && (i == 0 || tokens[i - 1] != "::");
        if starts_path {
            let mut prefix = vec![];
            i = read_path(&tokens, i, &mut prefix, in_use, &mut out);
        } else {
            i += 1;
        }
    }
    out
}

/// Reads the path at `tokens[i]` (after `prefix`), pushing each full path; returns the index after it.
fn read_path(tokens: &[String], mut i: usize, prefix: &mut Vec<String>, in_use: bool, out: &mut Vec<PathRef>) -> usize {
    let depth = prefix.len();
    loop {
        let Some(t) = tokens.get(i) else { break };
        if is_ident(t) {
            prefix.push(t.clone());
            i += 1;
            if tokens.get(i).is_some_and(|n| n == "::") {
                i += 1;
                continue;
            }
            out.push(PathRef { segments: prefix.clone(), in_use });
            break;
        } else if t == "{" {
            // A use group: each comma-separated item continues the prefix.
            i += 1;
            loop {
                match tokens.get(i).map(String::as_str) {
                    None => break,
                    Some("}") => {
                        i += 1;
                        break;
                    }
                    Some(",") => i += 1,
                    Some(_) => {
                        let before = prefix.len();
                        let next = read_path(tokens, i, prefix, in_use, out);
                        prefix.truncate(before);
                        // Skip what the item may have after its path (`as name`).
                        i = next.max(i + 1);
                        while tokens.get(i).is_some_and(|t| t != "," && t != "}") {
                            i += 1;
                        }
                    }
                }
            }
            break;
        } else {
            // `*`, `<`, or anything else ends the path.
            if prefix.len() > depth {
                out.push(PathRef { segments: prefix.clone(), in_use });
            } else if prefix.len() >= 1 {
                out.push(PathRef { segments: prefix.clone(), in_use });
            }
            break;
        }
    }
    prefix.truncate(depth);
    i
}

fn is_ident(t: &str) -> bool {
    t.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// Identifiers, `::`, and every other character as its own token (whitespace dropped).
fn tokenize(code: &str) -> Vec<String> {
    let c: Vec<char> = code.chars().collect();
    let mut out = vec![];
    let mut i = 0;
    while i < c.len() {
        if c[i].is_alphanumeric() || c[i] == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(c[start..i].iter().collect());
        } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
            out.push("::".into());
            i += 2;
        } else if c[i].is_whitespace() {
            i += 1;
        } else {
            out.push(c[i].to_string());
            i += 1;
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Checking

struct Layers(BTreeMap<String, usize>);

impl Layers {
    fn new(layers: &[&[&str]]) -> Layers {
        Layers(layers.iter().enumerate().flat_map(|(i, l)| l.iter().map(move |m| (m.to_string(), i))).collect())
    }
    fn of(&self, module: &str) -> Option<usize> {
        self.0.get(module).copied()
    }
}

#[derive(Default)]
struct Report {
    /// `from -> to` -> the imports that make it.
    upward: BTreeMap<String, Vec<Import>>,
    /// Each module cycle (its members) with the imports between them.
    module_cycles: Vec<(Vec<String>, Vec<Import>)>,
    /// Each file cycle within a module (its files) with the imports between them.
    file_cycles: Vec<(Vec<String>, Vec<Import>)>,
}

impl Report {
    fn upward_keys(&self) -> BTreeSet<String> {
        self.upward.keys().cloned().collect()
    }
    fn module_cycle_keys(&self) -> BTreeSet<String> {
        self.module_cycles.iter().map(|(m, _)| m.join(" ")).collect()
    }
    fn file_cycle_keys(&self) -> BTreeSet<String> {
        self.file_cycles.iter().map(|(m, _)| m.join(" ")).collect()
    }
    fn summary(&self) -> String {
        format!(
            "architecture: {} upward imports between modules ({} file imports), {} cycles between modules, {} cycles between files of a module",
            self.upward.len(),
            self.upward.values().map(|v| v.iter().map(|i| &i.file).collect::<BTreeSet<_>>().len()).sum::<usize>(),
            self.module_cycles.len(),
            self.file_cycles.len()
        )
    }
    fn details(&self) -> String {
        let mut s = String::new();
        for (edge, imports) in &self.upward {
            s.push_str(&format!("upward import {edge}:\n"));
            for i in imports {
                s.push_str(&format!("    src/{} imports {}\n", i.file, i.path));
            }
        }
        for (what, cycles) in [("modules", &self.module_cycles), ("files", &self.file_cycles)] {
            for (members, imports) in cycles {
                s.push_str(&format!("cycle between {what} {}:\n", members.join(", ")));
                for i in imports {
                    s.push_str(&format!("    src/{} imports {}\n", i.file, i.path));
                }
            }
        }
        s
    }
}

fn check(imports: &[Import], layers: &Layers, allowed_file_cycles: &[&[&str]]) -> Report {
    let mut report = Report::default();
    let module_of = |file: &str| top_module(file);
    // Between modules.
    let mut module_edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for i in imports {
        let from = module_of(&i.file);
        if from == i.to {
            continue;
        }
        module_edges.entry(from.clone()).or_default().insert(i.to.clone());
        if let (Some(a), Some(b)) = (layers.of(&from), layers.of(&i.to)) {
            if b > a {
                report.upward.entry(format!("{from} -> {}", i.to)).or_default().push(i.clone());
            }
        }
    }
    for scc in cycles(&module_edges) {
        let between = imports.iter().filter(|i| scc.contains(&module_of(&i.file)) && scc.contains(&i.to) && module_of(&i.file) != i.to).cloned().collect();
        report.module_cycles.push((scc, between));
    }
    // Between files of one module.
    let mut file_edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut by_edge: BTreeMap<(String, String), Vec<Import>> = BTreeMap::new();
    for i in imports {
        let Some(to_file) = &i.to_file else { continue };
        if module_of(&i.file) != i.to || *to_file == i.file || is_descendant(to_file, &i.file) {
            continue;
        }
        file_edges.entry(i.file.clone()).or_default().insert(to_file.clone());
        by_edge.entry((i.file.clone(), to_file.clone())).or_default().push(i.clone());
    }
    for scc in cycles(&file_edges) {
        let allowed = allowed_file_cycles.iter().any(|group| scc.iter().all(|f| group.contains(&f.as_str())));
        if allowed {
            continue;
        }
        let between = by_edge.iter().filter(|((a, b), _)| scc.contains(a) && scc.contains(b)).flat_map(|(_, v)| v.clone()).collect();
        report.file_cycles.push((scc, between));
    }
    report
}

/// Whether `file` is in the module tree whose root file is `root` (`a/mod.rs` owns `a/...`).
fn is_descendant(file: &str, root: &str) -> bool {
    let dir = child_dir(root);
    !dir.is_empty() && file.starts_with(&dir)
}

/// The strongly connected components of more than one node (Tarjan's algorithm), each sorted.
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(next) = s.edges.get(v) {
            for w in next {
                if !s.index.contains_key(w.as_str()) {
                    visit(s, w);
                    let lw = s.low[w.as_str()];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if s.on_stack.contains(w.as_str()) {
                    let iw = s.index[w.as_str()];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut scc = vec![];
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                scc.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort();
                s.out.push(scc);
            }
        }
    }
    let mut s = State { edges, index: BTreeMap::new(), low: BTreeMap::new(), stack: vec![], on_stack: BTreeSet::new(), out: vec![] };
    let nodes: BTreeSet<&str> = edges.iter().flat_map(|(k, v)| std::iter::once(k.as_str()).chain(v.iter().map(String::as_str))).collect();
    for v in nodes {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

// ---------------------------------------------------------------------------------------------
// The checker on synthetic trees: it must find what it is there to find.

fn tree(files: &[(&str, &str)]) -> SourceTree {
    SourceTree::from_texts(files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect())
}

const SMALL_LAYERS: &[&[&str]] = &[&["low"], &["mid", "peer"], &["high"]];

#[test]
fn checker_accepts_downward_imports() {
    let t = tree(&[
        ("lib.rs", "pub mod low; pub mod mid; pub mod high; pub use low::Thing;"),
        ("low.rs", "pub struct Thing;"),
        ("mid/mod.rs", "mod a; pub use a::f; use crate::low::Thing;"),
        ("mid/a.rs", "pub fn f() -> crate::Thing { super::g() } "),
        ("high.rs", "use crate::{low::Thing, mid::{self, f}};"),
    ]);
    let r = check(&t.imports(), &Layers::new(SMALL_LAYERS), &[]);
    assert!(r.upward.is_empty() && r.module_cycles.is_empty() && r.file_cycles.is_empty(), "{}", r.details());
}

#[test]
fn checker_finds_an_upward_import_and_names_the_file() {
    let t = tree(&[
        ("lib.rs", "pub mod low; pub mod high;"),
        ("low.rs", "pub fn f() { let _ = crate::high::g(); }"),
        ("high.rs", "pub fn g() {}"),
    ]);
    let r = check(&t.imports(), &Layers::new(SMALL_LAYERS), &[]);
    assert_eq!(r.upward_keys(), BTreeSet::from(["low -> high".to_string()]));
    assert!(r.details().contains("src/low.rs imports crate::high::g"), "{}", r.details());
}

#[test]
fn checker_finds_a_cycle_between_peers() {
    let t = tree(&[
        ("lib.rs", "pub mod mid; pub mod peer;"),
        ("mid.rs", "use crate::peer::{A, B as C};"),
        ("peer/mod.rs", "mod x;"),
        ("peer/x.rs", "fn f() { super::super::mid::g(); }"),
    ]);
    let r = check(&t.imports(), &Layers::new(SMALL_LAYERS), &[]);
    assert!(r.upward.is_empty(), "{}", r.details());
    assert_eq!(r.module_cycle_keys(), BTreeSet::from(["mid peer".to_string()]));
    assert!(r.details().contains("src/peer/x.rs imports super::super::mid::g"), "{}", r.details());
}

#[test]
fn checker_finds_a_cycle_between_files_unless_allowed() {
    let t = tree(&[
        ("lib.rs", "pub mod low;"),
        ("low/mod.rs", "mod a; mod b; pub use a::A; pub use b::B;"),
        ("low/a.rs", "use super::b::B; pub struct A;"),
        ("low/b.rs", "pub struct B; fn f() -> super::a::A { todo!() }"),
    ]);
    let r = check(&t.imports(), &Layers::new(SMALL_LAYERS), &[]);
    assert_eq!(r.file_cycle_keys(), BTreeSet::from(["low/a.rs low/b.rs".to_string()]));
    let r = check(&t.imports(), &Layers::new(SMALL_LAYERS), &[&["low/a.rs", "low/b.rs"]]);
    assert!(r.file_cycles.is_empty(), "{}", r.details());
}

#[test]
fn checker_skips_comments_strings_and_test_code() {
    let t = tree(&[
        ("lib.rs", "pub mod low; pub mod high;"),
        (
            "low/mod.rs",
            "// use crate::high::X;\n/* crate::high::Y */ const S: &str = \"crate::high::Z\"; const R: &str = r#\"crate::high::W\"#;\n\
             fn f<'a>(c: char) -> bool { c == '\"' }\n\
             #[cfg(test)]\nmod tests { use crate::high::T; }\n#[cfg(test)]\nmod more;",
        ),
        ("low/more.rs", "use crate::high::M;"),
        ("high.rs", "pub struct T;"),
    ]);
    let r = check(&t.imports(), &Layers::new(SMALL_LAYERS), &[]);
    assert!(r.upward.is_empty(), "{}", r.details());
}
