//! Reading what another party wrote (a container state on stdin, a spec, a CDI spec, a mount list, the chip cache)
//! with a ceiling: more than the limit is an error naming what was read, never a truncation and never an unbounded
//! allocation.

use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};

/// Reads at most `limit` bytes; more is an error, not a truncation.
///
/// # Errors
/// [`Error::Io`] or [`Error::TooLarge`].
pub(crate) fn read_limited(reader: impl Read, limit: u64, what: &'static str) -> Result<Vec<u8>> {
    read_limited_expecting(reader, limit, what, FIRST_READ)
}

/// The first read of a source whose size is unknown (a container state on stdin is a few hundred bytes): `Take` hides
/// the size from `read_to_end`, which would otherwise start at 32 bytes and double, one system call per step.
const FIRST_READ: u64 = 8 * 1024;

/// [`read_limited`] with room for `expected` bytes from the start, so that a source of that size is read in one call.
fn read_limited_expecting(reader: impl Read, limit: u64, what: &'static str, expected: u64) -> Result<Vec<u8>> {
    // One byte more than the limit is how a source that is too large shows; one more than expected sees the end.
    let capacity = usize::try_from(expected.min(limit).saturating_add(1)).unwrap_or(usize::MAX);
    let mut bytes = Vec::with_capacity(capacity);
    reader.take(limit + 1).read_to_end(&mut bytes).map_err(|e| Error::io("read", what, e))?;
    if bytes.len() as u64 > limit {
        return Err(Error::TooLarge { what, limit });
    }
    Ok(bytes)
}

/// [`read_limited`] on a file.
///
/// # Errors
/// As [`read_limited`], plus [`Error::Io`] naming the file when it cannot be opened.
pub(crate) fn read_limited_file(path: &Path, limit: u64, what: &'static str) -> Result<Vec<u8>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
    let size = file.metadata().map_err(|e| Error::io("stat", path, e))?.len();
    read_limited_expecting(file, limit, what, size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn up_to_the_limit_is_read_and_one_byte_more_is_refused() -> Result<()> {
        assert_eq!(read_limited(&b"12345"[..], 5, "five bytes")?, b"12345");
        let refused = read_limited(&b"123456"[..], 5, "five bytes");
        assert!(matches!(refused, Err(Error::TooLarge { what: "five bytes", limit: 5 })), "{refused:?}");
        Ok(())
    }
}
