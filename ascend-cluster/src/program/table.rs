//! Tables as kubectl prints them: upper-case headers, columns padded to their widest cell, three spaces apart;
//! colour codes do not count towards a width.

use std::fmt::Write;

/// A colour for a cell (shown only when the style allows colours).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Colour {
    Red,
    Yellow,
    Green,
}

impl Colour {
    fn code(self) -> &'static str {
        match self {
            Colour::Red => "\x1b[31m",
            Colour::Yellow => "\x1b[33m",
            Colour::Green => "\x1b[32m",
        }
    }
}

/// One cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cell {
    text: String,
    colour: Option<Colour>,
}

impl Cell {
    pub(crate) fn coloured(text: impl Into<String>, colour: Option<Colour>) -> Cell {
        Cell { text: text.into(), colour }
    }
}

impl<T: Into<String>> From<T> for Cell {
    fn from(text: T) -> Cell {
        Cell { text: text.into(), colour: None }
    }
}

/// A table being built.
#[derive(Debug, Clone, Default)]
pub(crate) struct Table {
    headers: Vec<&'static str>,
    rows: Vec<Vec<Cell>>,
}

impl Table {
    pub(crate) fn new(headers: Vec<&'static str>) -> Table {
        Table { headers, rows: Vec::new() }
    }

    pub(crate) fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    pub(crate) fn render(&self, colour: bool) -> String {
        let columns = self.headers.len();
        let mut widths: Vec<usize> = self.headers.iter().map(|header| header.chars().count()).collect();
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.text.chars().count());
            }
        }
        let mut text = String::new();
        let header_cells: Vec<Cell> = self.headers.iter().map(|header| Cell::from(*header)).collect();
        for row in std::iter::once(&header_cells).chain(&self.rows) {
            let mut line = String::new();
            for (index, cell) in row.iter().enumerate().take(columns) {
                let last = index + 1 == columns.min(row.len());
                let padding = if last { 0 } else { widths[index] - cell.text.chars().count() + 3 };
                match cell.colour.filter(|_| colour) {
                    Some(code) => {
                        let _ = write!(line, "{}{}\x1b[0m", code.code(), cell.text);
                    }
                    None => line.push_str(&cell.text),
                }
                line.extend(std::iter::repeat_n(' ', padding));
            }
            text.push_str(line.trim_end());
            text.push('\n');
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_padded_to_the_widest_cell_and_colours_do_not_count() {
        let mut table = Table::new(vec!["NAME", "FREE"]);
        table.row(vec!["node-1".into(), Cell::coloured("0", Some(Colour::Red))]);
        table.row(vec!["n".into(), "12".into()]);
        assert_eq!(table.render(false), "NAME     FREE\nnode-1   0\nn        12\n");
        assert_eq!(table.render(true).lines().nth(1), Some("node-1   \x1b[31m0\x1b[0m"));
    }
}
