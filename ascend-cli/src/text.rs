//! The text layout the tools' human output shares (`ascend-smi`'s tables, the doctor's report): lines of at most
//! [`WIDTH`] characters, long cells cut visibly, long lines wrapped at spaces with a hanging indent.

/// The width of every line of text output: an 80-column terminal.
pub const WIDTH: usize = 80;

/// Cuts `text` to `width` characters, marking a cut with `~`; shorter text is padded with spaces to `width`.
pub fn fit(text: &str, width: usize) -> String {
    let count = text.chars().count();
    if count <= width {
        return format!("{text:<width$}");
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('~');
    cut
}

/// Wraps `text` at spaces to lines of at most [`WIDTH`] characters, continuation lines indented by `hang` spaces.
/// Spacing inside each line is kept; a word longer than a line is cut visibly.
pub fn wrap_hanging(text: &str, hang: usize, lines: &mut Vec<String>) {
    let continuation = " ".repeat(hang.min(WIDTH / 2));
    let mut rest = text.trim_end().to_owned();
    loop {
        let chars: Vec<char> = rest.chars().collect();
        if chars.len() <= WIDTH {
            lines.push(rest);
            return;
        }
        let lead = chars.iter().take_while(|c| **c == ' ').count();
        let Some(cut) = (lead + 1..=WIDTH).rev().find(|index| chars[*index] == ' ') else {
            lines.push(fit(&rest, WIDTH));
            return;
        };
        let head: String = chars[..cut].iter().collect();
        let tail: String = chars[cut..].iter().collect();
        lines.push(head.trim_end().to_owned());
        rest = format!("{continuation}{}", tail.trim_start());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_cells_are_cut_visibly() {
        assert_eq!(fit("abcdefgh", 5), "abcd~");
        assert_eq!(fit("ab", 5), "ab   ");
    }

    #[test]
    fn wrapped_lines_hang_and_stay_within_the_width() {
        let mut lines = Vec::new();
        wrap_hanging(&format!("head {}", "word ".repeat(40)), 6, &mut lines);
        assert!(lines.len() > 1, "{lines:?}");
        assert!(lines.iter().all(|line| line.chars().count() <= WIDTH), "{lines:?}");
        assert!(lines[0].starts_with("head word"));
        assert!(lines[1..].iter().all(|line| line.starts_with("      word")), "{lines:?}");
        let mut long = Vec::new();
        wrap_hanging(&"x".repeat(100), 2, &mut long);
        assert_eq!(long, [format!("{}~", "x".repeat(WIDTH - 1))]);
    }
}
