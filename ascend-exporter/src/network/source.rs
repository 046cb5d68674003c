//! The snapshot source that adds the network sampler's readings to the DCMI sampler's snapshot: each chip gets its
//! [`ChipNetwork`](super::readings::ChipNetwork), so the catalogue reads both from one [`ChipSnapshot`].
//!
//! [`ChipSnapshot`]: crate::snapshot::ChipSnapshot

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use super::store::NetworkStore;
use crate::snapshot::{Snapshot, SnapshotRevision, SnapshotSource};

/// A source whose snapshots carry the network readings beside the driver's.
pub struct NetworkSource {
    inner: Arc<dyn SnapshotSource>,
    store: Arc<NetworkStore>,
}

impl std::fmt::Debug for NetworkSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetworkSource").field("store", &self.store).finish_non_exhaustive()
    }
}

impl NetworkSource {
    /// `inner`'s snapshots with the readings of `store`.
    pub fn new(inner: Arc<dyn SnapshotSource>, store: Arc<NetworkStore>) -> Self {
        Self { inner, store }
    }
}

impl SnapshotSource for NetworkSource {
    fn latest(&self) -> Option<Arc<Snapshot>> {
        let mut snapshot = self.inner.latest()?;
        // The sampler's source builds a new snapshot per call, so this copies nothing there.
        let chips = &mut Arc::make_mut(&mut snapshot).chips;
        for chip in chips {
            chip.hccn = self.store.chip(chip.ids.phy);
        }
        Some(snapshot)
    }

    /// A new revision whenever the driver's snapshot or the network readings change.
    fn revision(&self) -> Option<SnapshotRevision> {
        let mut hasher = DefaultHasher::new();
        (self.inner.revision()?, self.store.generation()).hash(&mut hasher);
        Some(SnapshotRevision::Layered(hasher.finish()))
    }
}
