//! Reading the ResourceClaims a DRA driver is asked to prepare.

use k8s_openapi::api::resource::v1::ResourceClaim;
use kube::Api;

use crate::client::{request, DEFAULT_REQUEST_TIMEOUT};
use crate::error::Result;

/// The claim `namespace/name`; `None` when it does not exist (it may be deleted while its pod starts).
///
/// # Errors
/// Any other API or transport error, naming `resourceclaims/<namespace>/<name>`, or a timeout.
pub async fn get_claim(client: &kube::Client, namespace: &str, name: &str) -> Result<Option<ResourceClaim>> {
    let claims: Api<ResourceClaim> = Api::namespaced(client.clone(), namespace);
    request("get", format!("resourceclaims/{namespace}/{name}"), DEFAULT_REQUEST_TIMEOUT, claims.get_opt(name)).await
}
