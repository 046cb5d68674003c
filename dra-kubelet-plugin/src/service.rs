//! The thin tonic adapters: the `DRAPlugin` services `v1` and `v1beta1` over one [`Driver`], with the guarantee
//! that every claim of a request gets an answer.

use std::collections::HashMap;
use std::sync::Arc;

use tonic::{Request, Response, Status};

use crate::api::{dra_v1, dra_v1beta1};
use crate::driver::{ClaimError, ClaimRef, Driver, PreparedDevice};

/// The driver plus the lock that serializes calls when the driver asks for it.
pub(crate) struct Calls<D> {
    driver: Arc<D>,
    serialize: Option<tokio::sync::Mutex<()>>,
}

impl<D: Driver> Calls<D> {
    pub(crate) fn new(driver: Arc<D>, serialize: bool) -> Arc<Self> {
        Arc::new(Calls { driver, serialize: serialize.then(|| tokio::sync::Mutex::new(())) })
    }

    async fn prepare(&self, claims: Vec<ClaimRef>) -> Vec<(String, Result<Vec<PreparedDevice>, ClaimError>)> {
        self.each_claim("prepare", claims, |driver, claim| async move { driver.prepare(&claim).await }).await
    }

    async fn unprepare(&self, claims: Vec<ClaimRef>) -> Vec<(String, Result<(), ClaimError>)> {
        self.each_claim("unprepare", claims, |driver, claim| async move { driver.unprepare(&claim).await }).await
    }

    /// Runs `call` for each claim in turn (under the lock when calls are serialized), so that every claim gets
    /// exactly one answer, keyed by its UID.
    async fn each_claim<T, F, Fut>(
        &self,
        what: &str,
        claims: Vec<ClaimRef>,
        call: F,
    ) -> Vec<(String, Result<T, ClaimError>)>
    where
        F: Fn(Arc<D>, ClaimRef) -> Fut,
        Fut: std::future::Future<Output = Result<T, ClaimError>>,
    {
        let _serialized = match &self.serialize {
            Some(lock) => Some(lock.lock().await),
            None => None,
        };
        let mut answers = Vec::with_capacity(claims.len());
        for claim in claims {
            let answer = match checked(&claim) {
                Ok(()) => call(Arc::clone(&self.driver), claim.clone()).await,
                Err(error) => Err(error),
            };
            if let Err(error) = &answer {
                tracing::warn!(%claim, %error, "{what} failed");
            }
            answers.push((claim.uid, answer));
        }
        answers
    }
}

/// The kubelet marks all three fields required; a driver should not have to check them.
fn checked(claim: &ClaimRef) -> Result<(), ClaimError> {
    let missing: Vec<&str> = [("namespace", &claim.namespace), ("name", &claim.name), ("uid", &claim.uid)]
        .into_iter()
        .filter(|(_, value)| value.is_empty())
        .map(|(field, _)| field)
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(ClaimError::new(format!("claim {claim} has no {}", missing.join(", "))))
    }
}

fn error_text<T>(answer: &Result<T, ClaimError>) -> String {
    answer.as_ref().err().map(|error| error.message().to_owned()).unwrap_or_default()
}

/// The two API versions have the same messages in different packages (v1 adds `share_id`), so one adapter is
/// written once and stamped out per package.
macro_rules! dra_adapter {
    ($(#[$doc:meta])* $adapter:ident, $api:ident, $device:ident) => {
        $(#[$doc])*
        pub(crate) struct $adapter<D>(pub(crate) Arc<Calls<D>>);

        #[tonic::async_trait]
        impl<D: Driver> $api::dra_plugin_server::DraPlugin for $adapter<D> {
            async fn node_prepare_resources(
                &self,
                request: Request<$api::NodePrepareResourcesRequest>,
            ) -> Result<Response<$api::NodePrepareResourcesResponse>, Status> {
                let claims =
                    request.into_inner().claims.into_iter().map(|c| claim_ref(c.namespace, c.name, c.uid)).collect();
                let claims: HashMap<_, _> = self
                    .0
                    .prepare(claims)
                    .await
                    .into_iter()
                    .map(|(uid, answer)| {
                        let error = error_text(&answer);
                        let devices = answer.unwrap_or_default().into_iter().map($device).collect();
                        (uid, $api::NodePrepareResourceResponse { devices, error })
                    })
                    .collect();
                Ok(Response::new($api::NodePrepareResourcesResponse { claims }))
            }

            async fn node_unprepare_resources(
                &self,
                request: Request<$api::NodeUnprepareResourcesRequest>,
            ) -> Result<Response<$api::NodeUnprepareResourcesResponse>, Status> {
                let claims =
                    request.into_inner().claims.into_iter().map(|c| claim_ref(c.namespace, c.name, c.uid)).collect();
                let claims = self
                    .0
                    .unprepare(claims)
                    .await
                    .into_iter()
                    .map(|(uid, answer)| (uid, $api::NodeUnprepareResourceResponse { error: error_text(&answer) }))
                    .collect();
                Ok(Response::new($api::NodeUnprepareResourcesResponse { claims }))
            }
        }
    };
}

dra_adapter!(
    /// `DRAPlugin` `v1`.
    DraV1,
    dra_v1,
    v1_device
);
dra_adapter!(
    /// `DRAPlugin` `v1beta1` (kubelets 1.32 and 1.33, which know no `v1`).
    DraV1beta1,
    dra_v1beta1,
    v1beta1_device
);

fn claim_ref(namespace: String, name: String, uid: String) -> ClaimRef {
    ClaimRef { namespace, name, uid }
}

fn v1_device(device: PreparedDevice) -> dra_v1::Device {
    dra_v1::Device {
        request_names: device.request_names,
        pool_name: device.pool,
        device_name: device.device,
        cdi_device_ids: device.cdi_device_ids,
        share_id: device.share_id,
    }
}

fn v1beta1_device(device: PreparedDevice) -> dra_v1beta1::Device {
    dra_v1beta1::Device {
        request_names: device.request_names,
        pool_name: device.pool,
        device_name: device.device,
        cdi_device_ids: device.cdi_device_ids,
    }
}
