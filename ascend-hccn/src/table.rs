//! The boxed tables of Ascend950's hccn_tool: `+----+` separator lines around rows of `|`-separated cells.

/// True for a separator line (`+-----+-----+`).
pub(crate) fn is_separator(line: &str) -> bool {
    line.trim_start().starts_with("+-")
}

/// The cells of a row, trimmed, without the empty text outside the outer bars.
pub(crate) fn cells(row: &str) -> Vec<&str> {
    let row = row.trim();
    let row = row.strip_prefix('|').unwrap_or(row);
    let row = row.strip_suffix('|').unwrap_or(row);
    row.split('|').map(str::trim).collect()
}

/// The rows with cells after separator number `first` (1-based) and before the next separator.
pub(crate) fn rows_after_separator(output: &str, first: usize) -> Option<Vec<&str>> {
    let mut separators = 0;
    let mut rows = Vec::new();
    for line in output.lines() {
        if is_separator(line) {
            separators += 1;
            if separators > first {
                return Some(rows);
            }
            continue;
        }
        if separators == first && line.trim_start().starts_with('|') {
            rows.push(line);
        }
    }
    // A table cut before its closing separator still gives the rows that are there.
    (separators == first).then_some(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_trimmed_and_outer_bars_dropped() {
        assert_eq!(cells("| 0      | 4  | UB |"), vec!["0", "4", "UB"]);
        assert_eq!(cells("|"), vec![""]);
    }

    #[test]
    fn rows_between_separators() {
        let table = "+--+\n| h |\n+--+\n| 1 |\n| 2 |\n+--+\n| 3 |\n";
        assert_eq!(rows_after_separator(table, 2), Some(vec!["| 1 |", "| 2 |"]));
        assert_eq!(rows_after_separator(table, 5), None);
    }
}
