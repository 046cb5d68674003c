//! `ascend-smi watch`: redraws the table in place without flicker.
//!
//! Clearing the screen before each frame is what makes `watch npu-smi info` flicker: for a moment the terminal shows
//! nothing. Instead every frame moves the cursor home, writes each line followed by "clear to end of line" (so a
//! shorter line leaves no tail of the previous frame), and ends with "clear to end of screen" (so a frame with fewer
//! lines leaves none behind). Nothing is ever blank on screen.

use std::io::{self, Write};
use std::thread;
use std::time::{Duration, Instant};

use super::exit_code::SmiExit;
use super::table;
use ascend_node::host_report::{HostReport, SCHEMA_VERSION};
use ascend_node::Collector;

/// Cursor to the top-left corner.
pub const CURSOR_HOME: &str = "\x1b[H";
/// Erase from the cursor to the end of the line.
pub const CLEAR_TO_END_OF_LINE: &str = "\x1b[K";
/// Erase from the cursor to the end of the screen.
pub const CLEAR_TO_END_OF_SCREEN: &str = "\x1b[J";

/// How each refresh is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameStyle {
    /// Redraw in place on a terminal.
    InPlace,
    /// Append each frame as plain text (output is not a terminal).
    Plain,
    /// One JSON document per line.
    JsonLines,
}

/// What to watch, how often, how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchOptions {
    /// Time from the start of one refresh to the start of the next.
    pub interval: Duration,
    /// Stop after this many refreshes; `None` runs until interrupted.
    pub count: Option<u64>,
    /// How frames are written.
    pub style: FrameStyle,
}

/// One in-place frame: cursor home, every line cleared to its end, the rest of the screen cleared.
pub fn in_place_frame(lines: &[String]) -> String {
    let mut frame = String::from(CURSOR_HOME);
    for line in lines {
        frame.push_str(line);
        frame.push_str(CLEAR_TO_END_OF_LINE);
        frame.push('\n');
    }
    frame.push_str(CLEAR_TO_END_OF_SCREEN);
    frame
}

fn header(options: &WatchOptions, refresh: u64) -> String {
    format!("Every {:.1}s: ascend-smi info (refresh {refresh})", options.interval.as_secs_f64())
}

fn frame(options: &WatchOptions, refresh: u64, result: &Result<HostReport, String>) -> io::Result<String> {
    if options.style == FrameStyle::JsonLines {
        let value = match result {
            Ok(report) => serde_json::to_value(report)?,
            Err(message) => serde_json::json!({ "schema_version": SCHEMA_VERSION, "error": message }),
        };
        return Ok(format!("{value}\n"));
    }
    let mut lines = vec![header(options, refresh)];
    match result {
        Ok(report) => lines.extend(table::render_lines(report)),
        Err(message) => table::wrap_into(&format!("driver error: {message}"), &mut lines),
    }
    Ok(match options.style {
        FrameStyle::InPlace => in_place_frame(&lines),
        FrameStyle::Plain | FrameStyle::JsonLines => lines.into_iter().map(|line| line + "\n").collect(),
    })
}

/// Refreshes until `options.count` frames were written (forever without a count).
///
/// # Errors
/// Writing to `out` failed.
pub fn run(collector: &Collector, options: &WatchOptions, out: &mut dyn Write) -> io::Result<SmiExit> {
    let mut refresh = 0u64;
    loop {
        let started = Instant::now();
        refresh += 1;
        let result = collector.collect().map_err(|error| error.to_string());
        let exit = match &result {
            Ok(report) => SmiExit::for_report(report),
            Err(_) => SmiExit::DriverError,
        };
        out.write_all(frame(options, refresh, &result)?.as_bytes())?;
        out.flush()?;
        if options.count.is_some_and(|count| refresh >= count) {
            return Ok(exit);
        }
        thread::sleep(options.interval.saturating_sub(started.elapsed()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_never_clears_the_whole_screen() {
        let frame = in_place_frame(&["one".to_owned(), "two".to_owned()]);
        assert_eq!(frame, "\x1b[Hone\x1b[K\ntwo\x1b[K\n\x1b[J");
        assert!(!frame.contains("\x1b[2J"));
    }
}
