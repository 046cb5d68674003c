//! Writes the node's ResourceSlices through kube-rs: server-side apply of each wanted slice under field manager
//! `ascend-dra-driver`, deletion of the driver's slices for this node that are no longer wanted, and a pool
//! generation that rises with every publication (the scheduler uses only the newest generation of a pool).

use std::collections::BTreeSet;

use k8s_openapi::api::resource::v1::ResourceSlice;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use kube::Api;

use crate::error::{Error, Result};
use crate::slices::{build_slices, ChipGroup, SliceOptions, NODE_LABEL};

/// The field manager of every write.
pub const FIELD_MANAGER: &str = "ascend-dra-driver";

/// Publishes one node's pool.
#[derive(Debug)]
pub struct SlicePublisher {
    api: Api<ResourceSlice>,
    options: SliceOptions,
    generation: Option<i64>,
}

impl SlicePublisher {
    /// A publisher for the node and driver of `options`.
    pub fn new(client: kube::Client, options: SliceOptions) -> Self {
        SlicePublisher { api: Api::all(client), options, generation: None }
    }

    /// The generation of the last publication.
    pub fn generation(&self) -> Option<i64> {
        self.generation
    }

    /// Publishes `groups` as the pool's complete content under a new generation; returns the slices written.
    ///
    /// # Errors
    /// [`Error::Api`] naming the slice and the operation that failed; the caller retries.
    pub async fn publish(&mut self, groups: &[ChipGroup]) -> Result<Vec<ResourceSlice>> {
        let listed = self
            .api
            .list(&ListParams::default().labels(&format!("{NODE_LABEL}={}", self.options.node_name)))
            .await
            .map_err(|source| Error::Api { operation: "listing ResourceSlices".into(), source })?;
        let existing: Vec<ResourceSlice> =
            listed.items.into_iter().filter(|slice| slice.spec.driver == self.options.driver).collect();
        // A restarted driver continues above whatever generation it (or a predecessor) wrote.
        let published = existing.iter().map(|slice| slice.spec.pool.generation).max().unwrap_or(0);
        let generation = self.generation.unwrap_or(0).max(published) + 1;
        let wanted = build_slices(groups, &self.options, generation);
        let params = PatchParams::apply(FIELD_MANAGER).force();
        for slice in &wanted {
            let name = slice.metadata.name.clone().unwrap_or_default();
            self.api
                .patch(&name, &params, &Patch::Apply(slice))
                .await
                .map_err(|source| Error::Api { operation: format!("applying ResourceSlice {name}"), source })?;
        }
        let wanted_names: BTreeSet<&str> = wanted.iter().filter_map(|s| s.metadata.name.as_deref()).collect();
        for slice in &existing {
            let Some(name) = slice.metadata.name.as_deref() else { continue };
            if !wanted_names.contains(name) {
                match self.api.delete(name, &DeleteParams::default()).await {
                    Ok(_) => {}
                    Err(kube::Error::Api(status)) if status.code == 404 => {}
                    Err(source) => {
                        return Err(Error::Api { operation: format!("deleting ResourceSlice {name}"), source })
                    }
                }
            }
        }
        self.generation = Some(generation);
        Ok(wanted)
    }
}
