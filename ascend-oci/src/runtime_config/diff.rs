//! A small line diff in unified format, for `--dry-run`.

/// Above this many line pairs the diff degrades to "remove all, add all" to bound memory.
const MAX_TABLE_CELLS: usize = 4_000_000;
/// Unchanged lines shown around each change.
const CONTEXT: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Keep(usize, usize),
    Remove(usize),
    Add(usize),
}

fn edit_script(old: &[&str], new: &[&str]) -> Vec<Op> {
    let (n, m) = (old.len(), new.len());
    if n.saturating_mul(m) > MAX_TABLE_CELLS {
        return (0..n).map(Op::Remove).chain((0..m).map(Op::Add)).collect();
    }
    // lcs[i][j] = length of the longest common subsequence of old[i..] and new[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old[i] == new[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::new();
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            ops.push(Op::Keep(i, j));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(Op::Remove(i));
            i += 1;
        } else {
            ops.push(Op::Add(j));
            j += 1;
        }
    }
    ops
}

/// The unified diff of two texts with `---`/`+++` headers naming `label`; empty when equal.
pub fn unified_diff(label: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let old_lines: Vec<&str> = old.lines().collect();
    let new_lines: Vec<&str> = new.lines().collect();
    let ops = edit_script(&old_lines, &new_lines);
    let changed: Vec<usize> =
        ops.iter().enumerate().filter(|(_, op)| !matches!(op, Op::Keep(..))).map(|(k, _)| k).collect();
    let mut out = format!("--- {label}\n+++ {label} (new)\n");
    let mut index = 0;
    while index < changed.len() {
        let start = changed[index].saturating_sub(CONTEXT);
        let mut end = changed[index];
        while index < changed.len() && changed[index] <= end + 2 * CONTEXT + 1 {
            end = changed[index];
            index += 1;
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        let hunk = &ops[start..end];
        let old_start = hunk.iter().find_map(|op| match op {
            Op::Keep(i, _) | Op::Remove(i) => Some(*i),
            Op::Add(_) => None,
        });
        let new_start = hunk.iter().find_map(|op| match op {
            Op::Keep(_, j) | Op::Add(j) => Some(*j),
            Op::Remove(_) => None,
        });
        let old_count = hunk.iter().filter(|op| !matches!(op, Op::Add(_))).count();
        let new_count = hunk.iter().filter(|op| !matches!(op, Op::Remove(_))).count();
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            old_start.map_or(0, |i| i + 1),
            old_count,
            new_start.map_or(0, |j| j + 1),
            new_count
        ));
        for op in hunk {
            match *op {
                Op::Keep(i, _) => out.push_str(&format!(" {}\n", old_lines[i])),
                Op::Remove(i) => out.push_str(&format!("-{}\n", old_lines[i])),
                Op::Add(j) => out.push_str(&format!("+{}\n", new_lines[j])),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_only_changes_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nX\nf\ng\nh\n";
        let diff = unified_diff("f", old, new);
        assert_eq!(diff, "--- f\n+++ f (new)\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+X\n f\n g\n h\n");
        assert_eq!(unified_diff("f", old, old), "");
    }
}
