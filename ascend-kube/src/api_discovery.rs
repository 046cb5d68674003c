//! What the API server serves: the versions of an API group in its discovery document (`/apis`). A tool reads it
//! to say whether a cluster has the API a component writes (the DRA driver's `resource.k8s.io/v1`) before the
//! component fails on a 404 of its first request.

use std::time::Duration;

use crate::client::request;
use crate::error::Result;

/// The versions of API group `group` (`resource.k8s.io`) the server serves, in the server's order (its preferred
/// version first); `None` when it does not serve the group at all.
///
/// # Errors
/// The request's error: [`crate::Error::Api`], [`crate::Error::Transport`], [`crate::Error::Timeout`].
pub async fn served_versions(client: kube::Client, group: &str, timeout: Duration) -> Result<Option<Vec<String>>> {
    let groups = request("get", "/apis", timeout, client.list_api_groups()).await?;
    Ok(groups
        .groups
        .into_iter()
        .find(|found| found.name == group)
        .map(|found| found.versions.into_iter().map(|version| version.version).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fake_apiserver::{FakeApiServer, Kind};

    #[tokio::test]
    async fn the_served_versions_of_a_group_preferred_first_and_an_absent_group() {
        let timeout = Duration::from_secs(5);
        let current = FakeApiServer::start().await.expect("fake API server");
        let both = FakeApiServer::builder()
            .kind(Kind::cluster("resource.k8s.io", "v1beta1", "resourceslices", "ResourceSlice"))
            .start()
            .await
            .expect("fake API server");
        let older = FakeApiServer::builder()
            .without_group_version("resource.k8s.io", "v1")
            .kind(Kind::cluster("resource.k8s.io", "v1beta1", "resourceslices", "ResourceSlice"))
            .start()
            .await
            .expect("fake API server");
        let none = FakeApiServer::builder().without_group_version("resource.k8s.io", "v1").start().await.expect("fake");
        let served = |server: &FakeApiServer| served_versions(server.client(), "resource.k8s.io", timeout);
        assert_eq!(served(&current).await.expect("get"), Some(vec!["v1".to_owned()]));
        assert_eq!(served(&both).await.expect("get"), Some(vec!["v1".to_owned(), "v1beta1".to_owned()]));
        assert_eq!(served(&older).await.expect("get"), Some(vec!["v1beta1".to_owned()]));
        assert_eq!(served(&none).await.expect("get"), None);
        current.stop_listening();
        let error = served(&current).await.expect_err("unreachable");
        assert!(error.to_string().contains("/apis"), "{error}");
    }
}
