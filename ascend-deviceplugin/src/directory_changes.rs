//! Changes in the kubelet's device-plugin directory, as inotify reports them (through the `notify` crate): the
//! supervisor checks the directory as soon as an entry is created, removed or renamed there, so that a restarted
//! kubelet (a new `kubelet.sock`, every plugin socket removed) has the plugin registered again at once, not at the
//! supervisor's next periodic check. Huawei's device plugin and the kubelet's own plugin watcher learn of these
//! changes the same way (fsnotify).
//!
//! The periodic check stays as the backstop (registration retries, a missed event): where no watch can be had (the
//! directory does not exist yet, or no inotify instance is left: `fs.inotify.max_user_instances`) or the directory
//! itself was removed, [`DirectoryChanges`] does not fire and is watched again at each check.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::Notify;

/// A watch on one directory's entries.
pub(crate) struct DirectoryChanges {
    dir: PathBuf,
    /// The watcher and what its thread tells: a change (a stored permit when nobody waits), and the watch's end.
    watch: Option<(RecommendedWatcher, Arc<Signals>)>,
}

#[derive(Default)]
struct Signals {
    changed: Notify,
    lost: AtomicBool,
}

impl DirectoryChanges {
    /// Watches `dir`; without a watch [`changed`](Self::changed) stays pending.
    pub(crate) fn watch(dir: &Path) -> Self {
        let mut changes = DirectoryChanges { dir: dir.to_owned(), watch: None };
        changes.watch_again_if_lost();
        changes
    }

    /// Whether the directory is watched now.
    pub(crate) fn is_watching(&self) -> bool {
        self.watch.as_ref().is_some_and(|(_, signals)| !signals.lost.load(Ordering::Acquire))
    }

    /// Watches the directory again when the watch is gone (the directory was removed, or watching failed before).
    pub(crate) fn watch_again_if_lost(&mut self) {
        if self.is_watching() {
            return;
        }
        self.watch = None;
        if !self.dir.is_dir() {
            // The kubelet makes it; nothing to say at every check.
            return;
        }
        let signals = Arc::new(Signals::default());
        let told = Arc::clone(&signals);
        let dir = self.dir.clone();
        let watched = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let gone = match &event {
                Ok(event) => matches!(event.kind, EventKind::Remove(_)) && event.paths.contains(&dir),
                Err(_) => true,
            };
            if gone {
                told.lost.store(true, Ordering::Release);
            }
            told.changed.notify_one();
        })
        .and_then(|mut watcher| watcher.watch(&self.dir, RecursiveMode::NonRecursive).map(|()| watcher));
        match watched {
            Ok(watcher) => self.watch = Some((watcher, signals)),
            Err(error) => tracing::warn!(dir = %self.dir.display(), %error,
                "cannot watch the plugin directory; a kubelet restart is noticed at the next periodic check"),
        }
    }

    /// Resolves once the directory changed since the last call (changes are coalesced, not told apart: the supervisor
    /// checks the whole directory). Pending forever without a watch; when the directory itself goes, resolves once.
    pub(crate) async fn changed(&self) {
        match &self.watch {
            Some((_, signals)) => signals.changed.notified().await,
            None => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    async fn fires_within(changes: &DirectoryChanges, limit: Duration) -> bool {
        tokio::time::timeout(limit, changes.changed()).await.is_ok()
    }

    #[tokio::test]
    async fn a_created_or_removed_entry_wakes_it_and_nothing_else_does() {
        let dir = tempfile::tempdir().expect("temp dir");
        let changes = DirectoryChanges::watch(dir.path());
        assert!(changes.is_watching());
        assert!(!fires_within(&changes, Duration::from_millis(200)).await, "no change, no wake-up");

        std::fs::write(dir.path().join("kubelet.sock"), b"").expect("create");
        assert!(fires_within(&changes, Duration::from_secs(5)).await, "a created entry wakes it");
        // The write's own events may still be coming: let them, then expect quiet.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let _ = fires_within(&changes, Duration::from_millis(10)).await;
        assert!(!fires_within(&changes, Duration::from_millis(200)).await, "changes are not repeated");

        std::fs::remove_file(dir.path().join("kubelet.sock")).expect("remove");
        assert!(fires_within(&changes, Duration::from_secs(5)).await, "a removed entry wakes it");
    }

    #[tokio::test]
    async fn a_removed_directory_ends_the_watch_and_a_new_one_is_watched_again() {
        let parent = tempfile::tempdir().expect("temp dir");
        let dir = parent.path().join("device-plugins");
        let mut changes = DirectoryChanges::watch(&dir);
        assert!(!changes.is_watching(), "no directory yet");
        assert!(!fires_within(&changes, Duration::from_millis(100)).await, "pending without a watch");

        std::fs::create_dir(&dir).expect("mkdir");
        changes.watch_again_if_lost();
        assert!(changes.is_watching());
        std::fs::remove_dir(&dir).expect("rmdir");
        assert!(fires_within(&changes, Duration::from_secs(5)).await, "the directory's removal wakes it");
        assert!(!changes.is_watching(), "the watch is gone with the directory");

        std::fs::create_dir(&dir).expect("mkdir again");
        changes.watch_again_if_lost();
        assert!(changes.is_watching());
        std::fs::write(dir.join("kubelet.sock"), b"").expect("create");
        assert!(fires_within(&changes, Duration::from_secs(5)).await, "watched again");
    }
}
