// SPDX-License-Identifier: GPL-2.0-only
//
// No two modules of scx_soryu reach each other, directly or through
// others: the modules of the library (src/lib.rs) and of the daemon
// (src/main.rs) each form a graph without a cycle, a module's file being
// one node (compare/render.rs is `compare::render`, apart from
// compare/mod.rs). An edge is any path a module's code names: `crate::a`,
// `super::b`, `self::c`, or a child module by its bare name (`render::`);
// a `use` tree counts each of its leaves. A module's `mod x;` alone is no
// edge (it only places the file), its tests (`#[cfg(test)]`) and comments
// are not read, and the daemon's `scx_soryu::` paths lead into the library,
// which cannot lead back. And the offline tools stay off the path that
// loads BPF: nothing the scheduler module reaches names compare or plot,
// in the daemon or through the library. The check is checked too: on
// made-up trees with a cycle, direct or through a parent and its child, it
// must find one.
//
//   cargo test --test modules -- --nocapture     prints both graphs

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One module: its path from the crate root ([] for the root), its
/// children's names, and its code as code_of() leaves it.
struct Module {
    path: Vec<String>,
    children: Vec<String>,
    code: String,
}

type Graph = BTreeMap<String, BTreeSet<String>>;

fn name(path: &[String]) -> String {
    if path.is_empty() {
        "crate".into()
    } else {
        path.join("::")
    }
}

/// The text of a source file without comments, string and char literals,
/// and `#[cfg(test)]` items (a `mod ... { }`, a `mod ...;`, a `use ...;`).
fn code_of(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < c.len() {
        let at = |j: usize| c.get(j).copied().unwrap_or('\0');
        let rest = |k: usize| at(i + k);
        match c[i] {
            '/' if rest(1) == '/' => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            '/' if rest(1) == '*' => {
                let mut depth = 0;
                while i < c.len() {
                    if c[i] == '/' && at(i + 1) == '*' {
                        depth += 1;
                        i += 2;
                    } else if c[i] == '*' && at(i + 1) == '/' {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            'r' if (rest(1) == '"' || rest(1) == '#')
                && !c
                    .get(i.wrapping_sub(1))
                    .is_some_and(|p| p.is_alphanumeric() || *p == '_') =>
            {
                let mut j = i + 1;
                let mut hashes = 0;
                while c.get(j) == Some(&'#') {
                    hashes += 1;
                    j += 1;
                }
                if c.get(j) != Some(&'"') {
                    out.push(c[i]);
                    i += 1;
                    continue;
                }
                j += 1;
                loop {
                    if j >= c.len() {
                        break;
                    }
                    if c[j] == '"' && (1..=hashes).all(|h| c.get(j + h) == Some(&'#')) {
                        j += 1 + hashes;
                        break;
                    }
                    j += 1;
                }
                out.push_str("\"\"");
                i = j;
            }
            '"' => {
                i += 1;
                while i < c.len() && c[i] != '"' {
                    if c[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                out.push_str("\"\"");
            }
            '\'' if rest(1) == '\\' => {
                i += 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push_str("' '");
            }
            '\'' if rest(2) == '\'' => {
                i += 3;
                out.push_str("' '");
            }
            ch => {
                out.push(ch);
                i += 1;
            }
        }
    }
    strip_test_items(&out)
}

/// Remove every item marked #[cfg(test)].
fn strip_test_items(code: &str) -> String {
    let mut s = code.to_string();
    while let Some(at) = s.find("#[cfg(test)]") {
        let after = at + "#[cfg(test)]".len();
        let b = s.as_bytes();
        // the item ends at its first `;` unless a `{` comes first, then at
        // the matching `}`
        let mut j = after;
        let mut depth = 0usize;
        while j < b.len() {
            match b[j] {
                b';' if depth == 0 => break,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        s.replace_range(at..(j + 1).min(s.len()), "");
    }
    s
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The `mod NAME;` declarations of a module's code.
fn declared(code: &str) -> Vec<String> {
    code.split(';')
        .filter_map(|stmt| {
            let w: Vec<&str> = stmt.split_whitespace().collect();
            match w.as_slice() {
                [.., "mod", n] if n.chars().all(is_ident) => Some(n.to_string()),
                _ => None,
            }
        })
        .collect()
}

/// Every module of the crate whose root file is `root`.
fn modules(root: &Path) -> Vec<Module> {
    let mut out = Vec::new();
    let mut todo = vec![(Vec::<String>::new(), root.to_path_buf())];
    while let Some((path, file)) = todo.pop() {
        let src = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        let code = code_of(&src);
        let children = declared(&code);
        // a root or a mod.rs holds its children beside it; a.rs in a/
        let dir = match file.file_name().and_then(|n| n.to_str()) {
            Some("lib.rs" | "main.rs" | "mod.rs") => file.parent().unwrap().to_path_buf(),
            _ => file.with_extension(""),
        };
        for c in &children {
            let flat = dir.join(format!("{c}.rs"));
            let nested = dir.join(c).join("mod.rs");
            let f = if flat.exists() { flat } else { nested };
            let mut p = path.clone();
            p.push(c.clone());
            todo.push((p, f));
        }
        out.push(Module {
            path,
            children,
            code,
        });
    }
    out
}

/// The paths a piece of code names from `at` on, a use tree expanded:
/// each as its segments ("crate", "a", "b" ...).
fn paths_at(
    code: &[char],
    mut at: usize,
    prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    let mut segs = prefix;
    loop {
        while at < code.len() && code[at].is_whitespace() {
            at += 1;
        }
        if code.get(at) == Some(&'{') {
            at += 1;
            loop {
                at = paths_at(code, at, segs.clone(), out);
                while at < code.len() && code[at].is_whitespace() {
                    at += 1;
                }
                match code.get(at) {
                    Some(',') => at += 1,
                    Some('}') => return at + 1,
                    _ => return at,
                }
                while at < code.len() && code[at].is_whitespace() {
                    at += 1;
                }
                if code.get(at) == Some(&'}') {
                    return at + 1;
                }
            }
        }
        let start = at;
        while at < code.len() && is_ident(code[at]) {
            at += 1;
        }
        if at == start {
            out.push(segs);
            return at;
        }
        segs.push(code[start..at].iter().collect());
        if code.get(at) == Some(&':') && code.get(at + 1) == Some(&':') {
            at += 2;
        } else {
            out.push(segs);
            return at;
        }
    }
}

/// The module a path names, seen from module `from`: the longest known
/// module its segments lead to. None for a path into another crate.
fn resolve(
    from: &[String],
    segs: &[String],
    known: &BTreeSet<Vec<String>>,
    lib_names: &BTreeSet<String>,
) -> Option<Vec<String>> {
    let mut base: Vec<String> = match segs.first().map(String::as_str) {
        Some("crate") => Vec::new(),
        Some("super") | Some("self") => from.to_vec(),
        _ => from.to_vec(), // a child by its bare name
    };
    let mut rest = match segs.first().map(String::as_str) {
        Some("crate") | Some("self") => &segs[1..],
        _ => segs, // super::..., or a child's name
    };
    while rest.first().map(String::as_str) == Some("super") {
        base.pop();
        rest = &rest[1..];
    }
    if base.is_empty() && rest.first().is_some_and(|s| lib_names.contains(s)) {
        return None;
    }
    for s in rest {
        if s == "self" {
            continue;
        }
        let mut next = base.clone();
        next.push(s.clone());
        if !known.contains(&next) {
            break;
        }
        base = next;
    }
    Some(base)
}

/// The names a crate root takes from the library (`use scx_soryu::...`).
fn lib_names(root_code: &str, lib: &str) -> BTreeSet<String> {
    let chars: Vec<char> = root_code.chars().collect();
    let pat: Vec<char> = format!("use {lib}::").chars().collect();
    let mut out = BTreeSet::new();
    let mut i = 0;
    while i + pat.len() <= chars.len() {
        if chars[i..i + pat.len()] == pat[..] {
            let mut paths = Vec::new();
            paths_at(&chars, i + pat.len(), Vec::new(), &mut paths);
            out.extend(paths.into_iter().filter_map(|p| p.last().cloned()));
        }
        i += 1;
    }
    out
}

/// The graph of the crate rooted at `root`: module -> the modules it names.
fn graph(root: &Path, lib: &str) -> Graph {
    graph_and_code(root, lib).0
}

/// The graph, and each module's code as code_of() leaves it.
fn graph_and_code(root: &Path, lib: &str) -> (Graph, BTreeMap<String, String>) {
    let mods = modules(root);
    let known: BTreeSet<Vec<String>> = mods.iter().map(|m| m.path.clone()).collect();
    let root_code = &mods.iter().find(|m| m.path.is_empty()).unwrap().code;
    let lib_names = lib_names(root_code, lib);
    let mut g = Graph::new();
    for m in &mods {
        let chars: Vec<char> = m.code.chars().collect();
        let mut paths = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let boundary =
                i == 0 || !(is_ident(chars[i - 1]) || chars[i - 1] == ':' || chars[i - 1] == '$');
            if boundary && is_ident(chars[i]) {
                let mut j = i;
                while j < chars.len() && is_ident(chars[j]) {
                    j += 1;
                }
                let word: String = chars[i..j].iter().collect();
                let is_path = chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':');
                let starts = matches!(word.as_str(), "crate" | "super" | "self")
                    || m.children.contains(&word);
                if is_path && starts {
                    i = paths_at(&chars, i, Vec::new(), &mut paths);
                    continue;
                }
                i = j;
                continue;
            }
            i += 1;
        }
        let edges = g.entry(name(&m.path)).or_default();
        for p in paths {
            if let Some(to) = resolve(&m.path, &p, &known, &lib_names) {
                if to != m.path {
                    edges.insert(name(&to));
                }
            }
        }
    }
    let code = mods.into_iter().map(|m| (name(&m.path), m.code)).collect();
    (g, code)
}

/// The modules `from` reaches, itself included.
fn reach(g: &Graph, from: &[&str]) -> BTreeSet<String> {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut todo: Vec<String> = from.iter().map(|s| s.to_string()).collect();
    while let Some(n) = todo.pop() {
        if seen.insert(n.clone()) {
            todo.extend(g.get(&n).into_iter().flatten().cloned());
        }
    }
    seen
}

/// A cycle of the graph, as "a -> b -> a", if there is one.
fn cycle(g: &Graph) -> Option<String> {
    fn visit(
        n: &str,
        g: &Graph,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<String> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            match state.get(m.as_str()).copied().unwrap_or(0) {
                1 => {
                    let from = stack.iter().position(|s| s == m).unwrap();
                    let mut c = stack[from..].to_vec();
                    c.push(m.clone());
                    return Some(c.join(" -> "));
                }
                0 => {
                    if let Some(c) = visit(m, g, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, g, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

fn show(label: &str, g: &Graph) {
    println!("{label}:");
    for (n, to) in g {
        println!(
            "  {n} -> {}",
            to.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
}

#[test]
fn no_module_reaches_itself() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for (label, root) in [("library", "lib.rs"), ("daemon", "main.rs")] {
        let g = graph(&src.join(root), "scx_soryu");
        show(label, &g);
        assert!(g.len() > 5, "{label}: only {} modules found", g.len());
        if let Some(c) = cycle(&g) {
            panic!("the {label}'s modules import each other: {c}");
        }
    }
}

// compare and plot are the library's, and only the subcommands reach them:
// nothing the scheduler's code reaches names them, in the daemon or
// through the library's modules it uses.
#[test]
fn the_scheduler_does_not_reach_the_offline_tools() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (daemon, code) = graph_and_code(&src.join("main.rs"), "scx_soryu");
    let lib = graph(&src.join("lib.rs"), "scx_soryu");
    let near = reach(&daemon, &["scheduler"]);
    assert!(
        near.contains("report") && near.contains("stats"),
        "{near:?}"
    );
    let mut named = BTreeSet::new();
    for m in &near {
        let chars: Vec<char> = code[m].chars().collect();
        let pat: Vec<char> = "scx_soryu::".chars().collect();
        for i in 0..chars.len().saturating_sub(pat.len()) {
            if chars[i..i + pat.len()] == pat[..] {
                let mut paths = Vec::new();
                paths_at(&chars, i + pat.len(), Vec::new(), &mut paths);
                named.extend(paths.into_iter().filter_map(|p| p.first().cloned()));
            }
        }
    }
    let named: Vec<&str> = named.iter().map(String::as_str).collect();
    assert!(named.contains(&"figures"), "{named:?}");
    let used = reach(&lib, &named);
    println!("the scheduler's path uses, of the library: {used:?}");
    for tool in ["compare", "plot"] {
        assert!(
            !used
                .iter()
                .any(|m| m == tool || m.starts_with(&format!("{tool}::"))),
            "the scheduler reaches {tool}: {used:?}"
        );
    }
}

/// A made-up crate in a temporary directory: (file, text) pairs.
fn crate_of(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("soryu-modules-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (f, text) in files {
        let p = dir.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

#[test]
fn the_check_finds_the_cycles_it_is_for() {
    // two modules through a use tree and an inline path
    let d = crate_of(
        "direct",
        &[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "use crate::{b::{f, g}};\npub fn h() {}\n"),
            ("b.rs", "pub fn f() { crate::a::h() }\npub fn g() {}\n"),
        ],
    );
    let c = cycle(&graph(&d.join("lib.rs"), "x"));
    assert!(matches!(c.as_deref(), Some("a -> b -> a")), "{c:?}");
    // a parent that uses its child, and the child its parent
    let d2 = crate_of(
        "parent",
        &[
            ("lib.rs", "pub mod p;\n"),
            ("p/mod.rs", "pub mod q;\npub use q::Q;\npub struct P;\n"),
            ("p/q.rs", "use super::P;\npub struct Q(P);\n"),
        ],
    );
    let c = cycle(&graph(&d2.join("lib.rs"), "x"));
    assert!(c.is_some_and(|c| c.contains("p::q")), "through super");
    // what is not an edge: comments, strings, tests, the declaration
    let d3 = crate_of(
        "none",
        &[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "use crate::b::f;\n"),
            (
                "b.rs",
                "// crate::a::x\npub fn f() { let _ = \"crate::a::y\"; }\n#[cfg(test)]\nmod tests {\n    use crate::a::*;\n}\n",
            ),
        ],
    );
    let g = graph(&d3.join("lib.rs"), "x");
    assert_eq!(cycle(&g), None, "{g:?}");
    assert_eq!(g["a"], BTreeSet::from(["b".to_string()]));
    // the daemon's `crate::` paths to names its root takes from the library
    let d4 = crate_of(
        "lib-names",
        &[
            (
                "main.rs",
                "mod a;\nuse x::{bpf_intf, policy};\nfn main() { a::f() }\n",
            ),
            ("a.rs", "use crate::bpf_intf::*;\npub fn f() {}\n"),
        ],
    );
    let g = graph(&d4.join("main.rs"), "x");
    assert_eq!(cycle(&g), None, "{g:?}");
    for d in [d, d2, d3, d4] {
        std::fs::remove_dir_all(d).unwrap();
    }
}
