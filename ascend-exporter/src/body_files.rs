//! Response bodies served more than once, each with a copy in a sealed in-memory file, so that a plain TCP
//! connection can hand them to the kernel with `sendfile(2)` instead of copying them into the socket
//! ([`crate::sendfile_stream`]).
//!
//! Why: a cached scrape body is sent unchanged to every scraper, and copying it into the socket was the largest single
//! cost of serving it. Measured on a 2-CPU machine (wrk with 8 connections, gzip scrapes of a 16-chip host with every
//! group, 49 KB): `_copy_from_iter` was 36 % of the exporter's CPU samples, and nginx serving the same bytes went from
//! 88,000-103,000 requests/s with `sendfile on` to 60,000-66,000 with `sendfile off`.
//!
//! A body is offered with every response that carries it ([`BodyFiles::offer`]); the second offer of the same bytes
//! writes them into a `memfd` sealed against any change (`F_SEAL_WRITE`, `F_SEAL_SHRINK`, `F_SEAL_GROW`), so a body
//! rendered for one scrape only (a zero cache age) never pays for the file. The registry holds a clone of each body it
//! has a file for, so the body's memory cannot be freed and reused for other bytes while it is registered: a slice
//! that lies inside a registered body is those bytes, and the file holds the same bytes at the same offset
//! ([`BodyFiles::file_of`]). At most [`MAX_FILES`] bodies have files; a newer one evicts the oldest, whose responses
//! still in flight continue with ordinary writes, and the offer of a new body drops the files of bodies nobody else
//! holds any more (the cache replaced them), so replaced bodies are freed as before: holding them raised the
//! resident memory of a 64-chip exporter under load from 13.2 to 21.5 MiB (docs/performance.md §4).
//!
//! Where `memfd_create` is refused (an old kernel, a seccomp profile that forbids it), bodies are served by copying,
//! as before; the refusal is logged once.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::RwLock;
use rustix::fs::{MemfdFlags, SealFlags};

/// How many bodies have files at a time: the two exposition formats, each plain and gzip.
pub const MAX_FILES: usize = 4;

/// The bodies with file copies; shared by the serving threads.
#[derive(Debug, Default)]
pub struct BodyFiles {
    inner: RwLock<Registry>,
    /// `memfd_create` or sealing failed once: stop trying.
    unavailable: AtomicBool,
    /// Bytes handed to `sendfile(2)` so far (tests and the load test read it).
    sent_bytes: AtomicU64,
}

#[derive(Debug, Default)]
struct Registry {
    files: VecDeque<BodyFile>,
    /// The latest bodies offered once and not yet given a file (scrapers of several formats and codings interleave).
    /// Held, so that a new body cannot take a freed one's address and pass for it.
    seen_once: VecDeque<Bytes>,
}

#[derive(Debug)]
struct BodyFile {
    /// Held so that the memory cannot be reused while the file stands for it.
    body: Bytes,
    file: Arc<File>,
}

/// Where a slice of a registered body is in its file.
#[derive(Debug, Clone)]
pub struct FileRange {
    /// The sealed file holding the body.
    pub file: Arc<File>,
    /// The slice's first byte in the file.
    pub offset: u64,
}

impl BodyFiles {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Notes that `body` is being served; its second offer gives it a file.
    pub fn offer(&self, body: &Bytes) {
        if body.is_empty() || self.unavailable.load(Ordering::Relaxed) {
            return;
        }
        if self.inner.read().files.iter().any(|entry| same_bytes(&entry.body, body)) {
            return;
        }
        let mut registry = self.inner.write();
        if registry.files.iter().any(|entry| same_bytes(&entry.body, body)) {
            return;
        }
        // A new body: bodies that only the registry still holds (the cache has replaced them and no response is
        // sending them) go, with their files and memory.
        registry.files.retain(|entry| !entry.body.is_unique());
        registry.seen_once.retain(|seen| !seen.is_unique());
        let Some(seen) = registry.seen_once.iter().position(|seen| same_bytes(seen, body)) else {
            if registry.seen_once.len() == MAX_FILES {
                registry.seen_once.pop_front();
            }
            registry.seen_once.push_back(body.clone());
            return;
        };
        registry.seen_once.remove(seen);
        match sealed_copy(body) {
            Ok(file) => {
                if registry.files.len() == MAX_FILES {
                    registry.files.pop_front();
                }
                registry.files.push_back(BodyFile { body: body.clone(), file: Arc::new(file) });
            }
            Err(error) => {
                self.unavailable.store(true, Ordering::Relaxed);
                tracing::info!(%error, "cannot keep scrape bodies in sealed memory files; serving them by copying");
            }
        }
    }

    /// The file and offset of `slice` if it lies wholly inside a registered body.
    pub fn file_of(&self, slice: &[u8]) -> Option<FileRange> {
        if slice.is_empty() {
            return None;
        }
        let start = slice.as_ptr() as usize;
        let end = start + slice.len();
        self.inner.read().files.iter().find_map(|entry| {
            let base = entry.body.as_ptr() as usize;
            (start >= base && end <= base + entry.body.len())
                .then(|| FileRange { file: Arc::clone(&entry.file), offset: (start - base) as u64 })
        })
    }

    /// Counts bytes sent from a file.
    pub fn record_sent(&self, bytes: usize) {
        self.sent_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Bytes sent from files so far.
    #[cfg(test)]
    pub fn sent_bytes(&self) -> u64 {
        self.sent_bytes.load(Ordering::Relaxed)
    }
}

/// The same memory, not merely equal contents: a clone of a cached body.
fn same_bytes(a: &Bytes, b: &Bytes) -> bool {
    a.as_ptr() == b.as_ptr() && a.len() == b.len()
}

/// `body` in a new memfd that nobody can change any more.
fn sealed_copy(body: &[u8]) -> std::io::Result<File> {
    let fd = rustix::fs::memfd_create("npu-exporter-body", MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING)?;
    let mut file = File::from(fd);
    file.write_all(body)?;
    rustix::fs::fcntl_add_seals(&file, SealFlags::WRITE | SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Seek, SeekFrom};

    use super::*;

    fn contents(range: &FileRange, len: usize) -> Vec<u8> {
        let mut file = range.file.as_ref();
        file.seek(SeekFrom::Start(range.offset)).expect("seek");
        let mut out = vec![0; len];
        file.read_exact(&mut out).expect("read");
        out
    }

    #[test]
    fn a_body_gets_its_file_on_the_second_offer_with_the_same_bytes_at_each_offset() {
        let files = BodyFiles::new();
        let body = Bytes::from((0..100_000u32).map(|i| (i % 251) as u8).collect::<Vec<_>>());
        files.offer(&body);
        assert!(files.file_of(&body).is_none(), "one offer gives no file");
        files.offer(&body.clone());
        let whole = files.file_of(&body).expect("a file after the second offer");
        assert_eq!(whole.offset, 0);
        assert_eq!(contents(&whole, body.len()), body.as_ref());
        let tail = &body[70_001..];
        let range = files.file_of(tail).expect("a slice inside the body");
        assert_eq!(range.offset, 70_001);
        assert_eq!(contents(&range, tail.len()), tail);
    }

    #[test]
    fn interleaved_scrapes_of_two_bodies_give_both_files() {
        let files = BodyFiles::new();
        let (plain, gzip) = (Bytes::from(vec![1u8; 3000]), Bytes::from(vec![2u8; 300]));
        for _ in 0..2 {
            files.offer(&plain);
            files.offer(&gzip);
        }
        assert!(files.file_of(&plain).is_some() && files.file_of(&gzip).is_some());
    }

    #[test]
    fn a_replaced_body_is_let_go_at_the_next_new_body() {
        let files = BodyFiles::new();
        let old = Bytes::from(vec![1u8; 5000]);
        files.offer(&old);
        files.offer(&old);
        assert_eq!(files.inner.read().files.len(), 1);
        // The cache replaces it: only the registry holds it now.
        drop(old);
        files.offer(&Bytes::from(vec![2u8; 6000]));
        let registry = files.inner.read();
        assert!(registry.files.is_empty(), "the replaced body and its file are let go");
        assert_eq!(registry.seen_once.len(), 1, "only the new body is remembered");
    }

    #[test]
    fn a_body_still_held_elsewhere_keeps_its_file() {
        let files = BodyFiles::new();
        let current = Bytes::from(vec![1u8; 5000]);
        files.offer(&current);
        files.offer(&current);
        files.offer(&Bytes::from(vec![2u8; 10]));
        assert!(files.file_of(&current).is_some());
    }

    #[test]
    fn equal_bytes_elsewhere_in_memory_are_not_the_registered_body() {
        let files = BodyFiles::new();
        let body = Bytes::from(vec![7u8; 4096]);
        files.offer(&body);
        files.offer(&body);
        let copy = body.to_vec();
        assert!(files.file_of(&copy).is_none());
        assert!(files.file_of(&[]).is_none());
    }

    #[test]
    fn the_file_cannot_be_changed() {
        let files = BodyFiles::new();
        let body = Bytes::from_static(b"ascend_npu_up 1\n");
        files.offer(&body);
        files.offer(&body);
        let range = files.file_of(&body).expect("file");
        assert!(range.file.as_ref().write_all(b"tampered").is_err(), "the seal refuses writes");
        assert!(range.file.set_len(1).is_err(), "the seal refuses shrinking");
    }

    #[test]
    fn the_oldest_file_makes_way_for_a_newer_body() {
        let files = BodyFiles::new();
        let bodies: Vec<Bytes> = (0..=MAX_FILES).map(|i| Bytes::from(vec![i as u8; 1000])).collect();
        for body in &bodies {
            files.offer(body);
            files.offer(body);
        }
        assert!(files.file_of(&bodies[0]).is_none(), "evicted");
        for body in &bodies[1..] {
            assert!(files.file_of(body).is_some());
        }
    }
}
