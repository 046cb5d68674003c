//! A pipe holding a scrape body's pages, the body copied into a transparent huge page where the kernel gives one.
//!
//! Why: sending a cached body without copying it (`sendfile(2)`, or `tee(2)` and `splice(2)` from a pipe) costs,
//! for every request, a reference taken and dropped on each page of the body, and the client's CPU drops the last
//! one when it has read the bytes, so each page's reference count bounces between CPUs. On 4 KiB pages that was
//! the largest cost left in serving a scrape: `generic_pipe_buf_get` and `page_cache_pipe_buf_release` were 21 % of
//! the exporter's CPU samples (a 49 KB gzip scrape, 13 pages). The pages of one huge page share one reference count,
//! as the large folios of a file in an ext4 page cache do (nginx's file in the benchmark). Measured on a 2-CPU
//! machine (`benches/scripts/exporter_every_group.py`'s 16-chip host, 49 KB gzip scrapes, wrk with 8 connections
//! on one CPU, the exporter's one serving thread and one nginx worker on the other, `sendfile on` for nginx):
//! CPU per scrape 10.2 µs sending from the body's `memfd` by `sendfile(2)`, 8.7 µs from a huge page through a
//! pipe, nginx 9.7 µs.
//!
//! Where transparent huge pages are off (`/sys/kernel/mm/transparent_hugepage/enabled` set to `never`) the copy
//! sits on ordinary pages and the pipe still works, at about the cost of `sendfile(2)`.
//!
//! This module holds the crate's only `unsafe` code: mapping and unmapping the memory, and `vmsplice(2)`, which
//! have no safe wrappers; each use says why it is sound.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::OwnedFd;

use rustix::mm::{Advice, MapFlags, ProtFlags};
use rustix::pipe::{IoSliceRaw, PipeFlags, SpliceFlags};

/// The size of a transparent huge page on x86-64 and arm64 (with 4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

/// A pipe holding references to the pages of a private copy of `body`, sized to hold them all; returns its read
/// end (the write end is closed: nothing is ever added). Nothing can change the copy: its mapping is gone when this
/// returns, and the pages live on only as the pipe's references (and those taken from it).
///
/// # Errors
/// The pipe cannot be made or sized to the body (a body over `/proc/sys/fs/pipe-max-size`, or the user's pipe
/// pages used up), or the memory cannot be mapped.
pub fn pipe_of_pages(body: &[u8]) -> io::Result<OwnedFd> {
    let (read, write) = rustix::pipe::pipe_with(PipeFlags::CLOEXEC)?;
    if rustix::pipe::fcntl_setpipe_size(&write, body.len())? < body.len() {
        return Err(io::Error::other("the pipe cannot be sized to the body"));
    }
    // A span of whole huge pages, mapped with one huge page to spare so that it can start on a huge-page boundary
    // (the spare is never touched, so never backed by memory).
    let span = body.len().div_ceil(HUGE_PAGE).max(1) * HUGE_PAGE;
    let mapped = span + HUGE_PAGE;
    // SAFETY: a new private anonymous mapping at an address the kernel chooses: no existing memory is affected.
    let base = unsafe {
        rustix::mm::mmap_anonymous(std::ptr::null_mut(), mapped, ProtFlags::READ | ProtFlags::WRITE, MapFlags::PRIVATE)
    }?;
    let result = fill_pipe(base.cast(), mapped, span, body, &write);
    // SAFETY: `base` and `mapped` are the mapping made above, and nothing refers to it any more: `fill_pipe`'s
    // slice of it has ended. The pages the pipe references stay alive with those references.
    let unmapped = unsafe { rustix::mm::munmap(base, mapped) };
    result?;
    unmapped?;
    Ok(read)
}

/// Copies `body` to the first huge-page boundary inside the mapping at `base` (`mapped` bytes, of which `span`
/// after that boundary) and gives the pipe `write` references to its pages.
fn fill_pipe(base: *mut u8, mapped: usize, span: usize, body: &[u8], write: &OwnedFd) -> io::Result<()> {
    let offset = (base as usize).next_multiple_of(HUGE_PAGE) - base as usize;
    debug_assert!(offset + span <= mapped && body.len() <= span);
    // SAFETY: `offset + span <= mapped`, so the slice lies inside the mapping made by the caller, which is readable
    // and writable, and nothing else refers to it while the slice lives.
    let copy = unsafe { std::slice::from_raw_parts_mut(base.add(offset), span) };
    // SAFETY: advice on memory of our own mapping; asking for huge pages changes no contents. A kernel without
    // transparent huge pages refuses it, and the copy then sits on ordinary pages.
    if let Err(error) = unsafe { rustix::mm::madvise(copy.as_mut_ptr().cast(), span, Advice::LinuxHugepage) } {
        tracing::debug!(%error, "no transparent huge page for a scrape body");
    }
    copy[..body.len()].copy_from_slice(body);
    let copy = &copy[..body.len()];
    let mut given = 0;
    while given < copy.len() {
        // SAFETY: `write` is the write end of a pipe, so the kernel only reads the memory; without
        // `SpliceFlags::GIFT` nothing more is asked of it. The pages are never written again: the caller unmaps
        // them, and an unmapped page still referenced by the pipe keeps its contents.
        let moved =
            unsafe { rustix::pipe::vmsplice(write, &[IoSliceRaw::from_slice(&copy[given..])], SpliceFlags::empty()) }?;
        if moved == 0 {
            return Err(io::Error::other("the pipe took none of the body"));
        }
        given += moved;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads the pipe's contents without consuming them, as a connection would see them: `tee` into a second pipe.
    fn contents(pages: &OwnedFd, len: usize) -> Vec<u8> {
        let (read, write) = rustix::pipe::pipe_with(PipeFlags::CLOEXEC).expect("pipe");
        rustix::pipe::fcntl_setpipe_size(&write, len).expect("size");
        let teed = rustix::pipe::tee(pages, &write, len, SpliceFlags::NONBLOCK).expect("tee");
        assert_eq!(teed, len, "the whole body is in the pipe");
        drop(write);
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut std::fs::File::from(read), &mut out).expect("read");
        out
    }

    #[test]
    fn the_pipe_holds_the_body_and_gives_it_again_on_every_tee() {
        for len in [1, 4096, 49_223, 300_001] {
            let body: Vec<u8> = (0..len).map(|i| (i * 13 % 251) as u8).collect();
            let pages = pipe_of_pages(&body).expect("pipe of pages");
            assert!(contents(&pages, len) == body, "first tee of {len} bytes");
            assert!(contents(&pages, len) == body, "second tee of {len} bytes");
        }
    }
}
