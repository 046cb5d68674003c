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
    let mut bytes = Vec::new();
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
    read_limited(file, limit, what)
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
