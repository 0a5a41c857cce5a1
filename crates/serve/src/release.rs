//! The cluster's own release at `serve`'s start-up (crate `topospread-kubeclient` reads
//! and chooses it): asked until the API server answers, with `/readyz` saying so
//! meanwhile; this crate's [`Error`](crate::Error) for the client's.

use tracing::{info, warn};

use topospread::version::KubernetesVersion;
use topospread_kubeclient::{Backoff, ReleaseChoice, ServerRelease, describe, release_of};

use crate::error::Result;
use crate::http::Readiness;

/// Asks the API server its release (`GET /version`). `server` names the cluster in
/// errors.
pub async fn server_release(client: &kube::Client, server: &str) -> Result<ServerRelease> {
    Ok(topospread_kubeclient::server_release(client, server).await?)
}

/// Chooses the release: `given` (`--kubernetes-version`) when there is one, else the
/// cluster's. A cluster release outside 1.25..1.38 is
/// [`ClientError::UnsupportedRelease`](crate::ClientError::UnsupportedRelease) unless
/// `allow_unsupported`, which behaves as the nearest supported release.
pub fn choose_release(
    cluster: Option<ServerRelease>,
    given: Option<KubernetesVersion>,
    allow_unsupported: bool,
    server: &str,
) -> Result<ReleaseChoice> {
    Ok(topospread_kubeclient::choose_release(
        cluster,
        given,
        allow_unsupported,
        server,
    )?)
}

/// [`server_release`], asked again with `backoff` until the API server answers, as
/// kube-scheduler keeps retrying a server that is not up yet instead of exiting:
/// `readiness` says what is waited for (`/readyz` answers 503 with it) and each new
/// error is logged once. An answer that names no Kubernetes 1.x release is an error.
pub async fn wait_for_release(
    client: &kube::Client,
    server: &str,
    readiness: &Readiness,
    backoff: Backoff,
) -> Result<ServerRelease> {
    let mut delay = backoff.first;
    let mut logged: Option<String> = None;
    loop {
        match client.apiserver_version().await {
            Ok(info) => {
                if logged.is_some() {
                    info!(server, "the API server answers");
                }
                return Ok(release_of(&info, server)?);
            }
            Err(e) => {
                let message = describe(&e);
                if logged.as_deref() != Some(message.as_str()) {
                    warn!(server, error = %message, "reading the API server's release (/version) failed; retrying with back-off");
                    logged = Some(message.clone());
                }
                readiness.wait_for(format!(
                    "waiting for the API server's release (/version): {message}"
                ));
                tokio::time::sleep(delay).await;
                delay = backoff.next(delay);
            }
        }
    }
}
