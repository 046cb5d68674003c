//! The source files of the crate depend only downward: no file reaches, through `crate::` paths, a file that reaches
//! it back. A cycle is how a low layer (the FFI module, the chip table) starts knowing about the layers above it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, by its path relative to `src/` without the extension (`fault_events/mod`).
fn sources(dir: &Path, root: &Path, found: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, root, found);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            let relative = path.strip_prefix(root).expect("below src").with_extension("");
            let text = std::fs::read_to_string(&path).expect("a readable source file");
            found.insert(relative.to_string_lossy().into_owned(), text);
        }
    }
}

/// The file a `crate::` path names: the longest prefix of its segments that is a file or a directory module.
fn resolve(segments: &[&str], files: &BTreeMap<String, String>) -> Option<String> {
    (1..=segments.len()).rev().find_map(|length| {
        let joined = segments[..length].join("/");
        [joined.clone(), format!("{joined}/mod")].into_iter().find(|candidate| files.contains_key(candidate))
    })
}

/// The files each file names through `crate::` paths (imports, paths in code and in doc links alike).
fn dependencies(files: &BTreeMap<String, String>) -> BTreeMap<String, Vec<String>> {
    files
        .iter()
        .map(|(file, text)| {
            let mut targets: Vec<String> = text
                .match_indices("crate::")
                .filter_map(|(at, _)| {
                    let rest = &text[at + "crate::".len()..];
                    let path: String =
                        rest.chars().take_while(|c| c.is_ascii_lowercase() || *c == '_' || *c == ':').collect();
                    let segments: Vec<&str> = path.split("::").filter(|segment| !segment.is_empty()).collect();
                    resolve(&segments, files)
                })
                .filter(|target| target != file)
                .collect();
            targets.sort();
            targets.dedup();
            (file.clone(), targets)
        })
        .collect()
}

/// A cycle through `file`, if the depth-first walk from it finds one.
fn find_cycle(
    file: &str,
    graph: &BTreeMap<String, Vec<String>>,
    path: &mut Vec<String>,
    done: &mut Vec<String>,
) -> Option<Vec<String>> {
    if let Some(start) = path.iter().position(|seen| seen == file) {
        let mut cycle = path[start..].to_vec();
        cycle.push(file.to_owned());
        return Some(cycle);
    }
    if done.iter().any(|finished| finished == file) {
        return None;
    }
    path.push(file.to_owned());
    for next in graph.get(file).into_iter().flatten() {
        if let Some(cycle) = find_cycle(next, graph, path, done) {
            return Some(cycle);
        }
    }
    path.pop();
    done.push(file.to_owned());
    None
}

#[test]
fn no_source_file_depends_on_a_file_that_depends_on_it() {
    let root: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    sources(&root, &root, &mut files);
    let graph = dependencies(&files);
    assert!(graph["ffi"].iter().all(|target| !target.starts_with("fault_events")), "ffi names the event layer");
    let mut done = Vec::new();
    for file in graph.keys() {
        if let Some(cycle) = find_cycle(file, &graph, &mut Vec::new(), &mut done) {
            panic!("import cycle: {}", cycle.join(" -> "));
        }
    }
}
