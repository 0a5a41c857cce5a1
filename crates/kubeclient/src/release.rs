//! The cluster's own release: the API server's `/version`, read at start-up so that
//! `serve` and the `--live` commands behave as the release the cluster runs (its
//! feature-gate defaults and versioned behaviour) unless `--kubernetes-version` says
//! otherwise. A release topospread does not model is refused unless forced.

use std::fmt;
use std::time::Duration;

use topospread::version::{KubernetesVersion, NEWEST_MINOR, OLDEST_MINOR};

use crate::error::{Error, Result, describe};

/// What the API server says it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerRelease {
    /// `gitVersion` as reported (`v1.32.3-eks-1234`), for messages.
    pub git_version: String,
    /// Its `1.MINOR`, whether or not topospread models it.
    pub version: KubernetesVersion,
}

impl ServerRelease {
    /// Reads a `/version` answer: `major` and `minor` (GKE and EKS report `"32+"`),
    /// else `gitVersion`.
    pub fn from_info(info: &k8s_openapi::apimachinery::pkg::version::Info) -> Option<Self> {
        let minor: String = info
            .minor
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let version = KubernetesVersion::parse_any(&format!("{}.{minor}", info.major.trim()))
            .or_else(|_| KubernetesVersion::parse_any(&info.git_version))
            .ok()?;
        Some(Self {
            git_version: info.git_version.clone(),
            version,
        })
    }
}

/// Asks the API server its release (`GET /version`). `server` names the cluster in
/// errors.
pub async fn server_release(client: &kube::Client, server: &str) -> Result<ServerRelease> {
    let info = client
        .apiserver_version()
        .await
        .map_err(|e| Error::ServerVersion {
            server: server.to_string(),
            message: describe(&e),
        })?;
    release_of(&info, server)
}

/// The release a `/version` answer names, or [`Error::ServerVersion`] saying why not.
pub fn release_of(
    info: &k8s_openapi::apimachinery::pkg::version::Info,
    server: &str,
) -> Result<ServerRelease> {
    ServerRelease::from_info(info).ok_or_else(|| Error::ServerVersion {
        server: server.to_string(),
        message: format!(
            "major {:?}, minor {:?}, gitVersion {:?} is not a Kubernetes 1.x release",
            info.major, info.minor, info.git_version
        ),
    })
}

/// Exponential back-off between attempts: `first`, doubling, at most `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// The first wait.
    pub first: Duration,
    /// The longest wait.
    pub max: Duration,
}

impl Default for Backoff {
    /// 1 s doubling to 30 s: a replica started during a control-plane upgrade asks
    /// again soon, and a long outage costs one request every 30 s.
    fn default() -> Self {
        Self {
            first: Duration::from_secs(1),
            max: Duration::from_secs(30),
        }
    }
}

impl Backoff {
    /// The wait after `delay`.
    pub fn next(self, delay: Duration) -> Duration {
        (delay * 2).min(self.max).max(self.first)
    }
}

/// Why a run behaves as the release it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReleaseSource {
    /// `--kubernetes-version` chose it.
    Flag,
    /// The API server runs it.
    Cluster,
    /// The API server runs a release topospread does not model and
    /// `--allow-unsupported-kubernetes-version` was given: the nearest supported one.
    NearestToCluster,
}

/// The release a run behaves as, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReleaseChoice {
    /// The release behaved as.
    pub version: KubernetesVersion,
    /// What the API server reported, when it was asked.
    pub cluster: Option<ServerRelease>,
    /// Why this release.
    pub source: ReleaseSource,
}

impl fmt::Display for ReleaseChoice {
    /// One line for the logs: the release and why.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let version = self.version;
        match (&self.source, &self.cluster) {
            (ReleaseSource::Flag, Some(c)) => write!(
                f,
                "behaving as Kubernetes {version} (--kubernetes-version); the API server runs {}",
                c.git_version
            ),
            (ReleaseSource::Flag, None) => {
                write!(f, "behaving as Kubernetes {version} (--kubernetes-version)")
            }
            (_, None) => write!(f, "behaving as Kubernetes {version}"),
            (ReleaseSource::Cluster, Some(c)) => write!(
                f,
                "behaving as Kubernetes {version}, the API server's release ({})",
                c.git_version
            ),
            (ReleaseSource::NearestToCluster, Some(c)) => write!(
                f,
                "behaving as Kubernetes {version}, the supported release nearest the API server's {} (--allow-unsupported-kubernetes-version)",
                c.git_version
            ),
        }
    }
}

/// Chooses the release: `given` (`--kubernetes-version`) when there is one, else the
/// cluster's. A cluster release outside 1.25..1.38 is [`Error::UnsupportedRelease`]
/// unless `allow_unsupported`, which behaves as the nearest supported release.
pub fn choose_release(
    cluster: Option<ServerRelease>,
    given: Option<KubernetesVersion>,
    allow_unsupported: bool,
    server: &str,
) -> Result<ReleaseChoice> {
    if let Some(version) = given {
        return Ok(ReleaseChoice {
            version,
            cluster,
            source: ReleaseSource::Flag,
        });
    }
    let Some(c) = cluster else {
        return Ok(ReleaseChoice {
            version: KubernetesVersion::NEWEST,
            cluster: None,
            source: ReleaseSource::Flag,
        });
    };
    match c.version.supported() {
        Ok(version) => Ok(ReleaseChoice {
            version,
            cluster: Some(c),
            source: ReleaseSource::Cluster,
        }),
        Err(_) if allow_unsupported => Ok(ReleaseChoice {
            version: c.version.nearest_supported(),
            cluster: Some(c),
            source: ReleaseSource::NearestToCluster,
        }),
        Err(_) => Err(Error::UnsupportedRelease {
            server: server.to_string(),
            git_version: c.git_version,
            oldest: OLDEST_MINOR,
            newest: NEWEST_MINOR,
            nearest: c.version.nearest_supported(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(major: &str, minor: &str, git: &str) -> k8s_openapi::apimachinery::pkg::version::Info {
        k8s_openapi::apimachinery::pkg::version::Info {
            major: major.into(),
            minor: minor.into(),
            git_version: git.into(),
            ..Default::default()
        }
    }

    fn release(minor: u32) -> ServerRelease {
        ServerRelease {
            git_version: format!("v1.{minor}.0"),
            version: KubernetesVersion { minor },
        }
    }

    #[test]
    fn the_backoff_doubles_up_to_its_cap() {
        let b = Backoff::default();
        let mut delay = b.first;
        let mut seen = vec![delay.as_secs()];
        for _ in 0..6 {
            delay = b.next(delay);
            seen.push(delay.as_secs());
        }
        assert_eq!(seen, [1, 2, 4, 8, 16, 30, 30]);
    }

    #[test]
    fn version_answers_read_as_providers_write_them() {
        let gke = ServerRelease::from_info(&info("1", "32+", "v1.32.3-gke.100"));
        assert_eq!(gke.map(|r| r.version.minor), Some(32));
        let git_only = ServerRelease::from_info(&info("", "", "v1.30.1"));
        assert_eq!(git_only.map(|r| r.version.minor), Some(30));
        let old = ServerRelease::from_info(&info("1", "20", "v1.20.0"));
        assert_eq!(old.map(|r| r.version.minor), Some(20));
        assert_eq!(ServerRelease::from_info(&info("2", "0", "v2.0.0")), None);
    }

    #[test]
    fn the_flag_wins_then_the_cluster_then_forcing() {
        let v = |minor| KubernetesVersion { minor };
        let flag = choose_release(Some(release(32)), Some(v(30)), false, "s");
        assert_eq!(
            flag.ok().map(|c| (c.version, c.source)),
            Some((v(30), ReleaseSource::Flag))
        );
        let cluster = choose_release(Some(release(32)), None, false, "s");
        assert_eq!(
            cluster.ok().map(|c| (c.version, c.source)),
            Some((v(32), ReleaseSource::Cluster))
        );
        let old = choose_release(Some(release(24)), None, false, "https://k:6443");
        let e = old
            .map(|_| ())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert_eq!(
            e,
            "cluster https://k:6443: the API server runs Kubernetes v1.24.0, outside the releases topospread models (1.25 to 1.38): give --kubernetes-version, or --allow-unsupported-kubernetes-version to behave as 1.25"
        );
        let forced = choose_release(Some(release(41)), None, true, "s");
        assert_eq!(
            forced.ok().map(|c| (c.version, c.source)),
            Some((v(38), ReleaseSource::NearestToCluster))
        );
        // An unsupported cluster is fine when the flag chooses the release.
        assert!(choose_release(Some(release(24)), Some(v(25)), false, "s").is_ok());
    }
}
