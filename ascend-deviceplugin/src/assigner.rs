//! The seam for schedulers that choose chips themselves: a [`DeviceAssigner`] tells Allocate which devices a
//! container really gets, instead of the ids the kubelet picked.
//!
//! Volcano's Ascend plugin is such a scheduler: it writes the chips on the pod, and the kubelet's ids only say how
//! many (`crate::volcano`, feature `volcano`). Whatever the assigner returns still goes through the same checks as
//! the kubelet's ids (advertised by this resource, healthy), so an assigner can never hand out a chip the plugin
//! would refuse.

use crate::error::Result;
use crate::held::Holdings;
use ascend_node::Resource;

/// Chooses the devices of one container's Allocate.
#[tonic::async_trait]
pub trait DeviceAssigner: Send + Sync {
    /// The device ids (of `resource`) the container gets, given the ids the kubelet passed and what the kubelet's
    /// PodResources last said running pods hold (`holdings`; a chip a running pod holds must not be given).
    ///
    /// # Errors
    /// [`crate::Error::Assignment`] naming why no device can be given; the kubelet then fails the pod's admission.
    async fn assign(&self, resource: &Resource, kubelet_ids: &[String], holdings: &Holdings) -> Result<Vec<String>>;
}
