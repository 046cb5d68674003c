//! The client kubectl would use: `--kubeconfig` and `--context` as kubectl reads them, else `$KUBECONFIG` or
//! `~/.kube/config`, else the pod's service account.

use kube::config::{KubeConfigOptions, Kubeconfig};

use super::Args;
use crate::error::{Error, Result};

/// The client and the context's default namespace for `args`.
///
/// # Errors
/// [`Error::Kubeconfig`] when the kubeconfig cannot be read, names no such context, or no configuration is found.
pub async fn client_for(args: &Args) -> Result<(kube::Client, String)> {
    let failed =
        |source: Box<dyn std::error::Error + Send + Sync>| Error::Kubeconfig { context: args.context.clone(), source };
    let options = KubeConfigOptions { context: args.context.clone(), cluster: None, user: None };
    let config = match (&args.kubeconfig, &args.context) {
        (Some(path), _) => {
            let file = Kubeconfig::read_from(path).map_err(|error| failed(Box::new(error)))?;
            kube::Config::from_custom_kubeconfig(file, &options).await.map_err(|error| failed(Box::new(error)))?
        }
        (None, Some(_)) => kube::Config::from_kubeconfig(&options).await.map_err(|error| failed(Box::new(error)))?,
        (None, None) => kube::Config::infer().await.map_err(|error| failed(Box::new(error)))?,
    };
    let namespace = config.default_namespace.clone();
    let client = kube::Client::try_from(config).map_err(|error| failed(Box::new(error)))?;
    Ok((client, namespace))
}
