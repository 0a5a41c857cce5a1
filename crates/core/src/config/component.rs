//! The component-base parts of a `KubeSchedulerConfiguration`: `leaderElection` and
//! `clientConnection`, with their v1 defaults. The engine does not act on them; they are
//! decoded so that kube-scheduler's start-up checks can be applied.

use serde::Deserialize;

/// `leaderElection` (`LeaderElectionConfiguration`), as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaderElection {
    /// `leaderElect` (default true).
    #[serde(default)]
    pub leader_elect: Option<bool>,
    /// `leaseDuration`, a Go duration (default `15s`).
    #[serde(default)]
    pub lease_duration: Option<String>,
    /// `renewDeadline`, a Go duration (default `10s`).
    #[serde(default)]
    pub renew_deadline: Option<String>,
    /// `retryPeriod`, a Go duration (default `2s`).
    #[serde(default)]
    pub retry_period: Option<String>,
    /// `resourceLock` (default `leases`).
    #[serde(default)]
    pub resource_lock: Option<String>,
    /// `resourceName` (default `kube-scheduler`).
    #[serde(default)]
    pub resource_name: Option<String>,
    /// `resourceNamespace` (default `kube-system`).
    #[serde(default)]
    pub resource_namespace: Option<String>,
}

impl LeaderElection {
    /// `leaderElect` after defaulting.
    pub fn leader_elect(&self) -> bool {
        self.leader_elect.unwrap_or(true)
    }

    /// `leaseDuration` after defaulting, as written.
    pub fn lease_duration(&self) -> &str {
        self.lease_duration.as_deref().unwrap_or("15s")
    }

    /// `renewDeadline` after defaulting, as written.
    pub fn renew_deadline(&self) -> &str {
        self.renew_deadline.as_deref().unwrap_or("10s")
    }

    /// `retryPeriod` after defaulting, as written.
    pub fn retry_period(&self) -> &str {
        self.retry_period.as_deref().unwrap_or("2s")
    }

    /// `resourceLock` after defaulting.
    pub fn resource_lock(&self) -> &str {
        self.resource_lock.as_deref().unwrap_or("leases")
    }

    /// `resourceName` after defaulting.
    pub fn resource_name(&self) -> &str {
        self.resource_name.as_deref().unwrap_or("kube-scheduler")
    }

    /// `resourceNamespace` after defaulting.
    pub fn resource_namespace(&self) -> &str {
        self.resource_namespace.as_deref().unwrap_or("kube-system")
    }
}

/// `clientConnection` (`ClientConnectionConfiguration`), as written.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientConnection {
    /// `kubeconfig`.
    #[serde(default)]
    pub kubeconfig: Option<String>,
    /// `acceptContentTypes`.
    #[serde(default)]
    pub accept_content_types: Option<String>,
    /// `contentType`.
    #[serde(default)]
    pub content_type: Option<String>,
    /// `qps` (default 50).
    #[serde(default)]
    pub qps: Option<f64>,
    /// `burst` (default 100).
    #[serde(default)]
    pub burst: Option<i32>,
}

/// Parses a Go duration (`1m30s`, `500ms`, `-2s`, `0`) into nanoseconds; `None` if it is
/// not one.
pub fn parse_duration(text: &str) -> Option<i128> {
    let (negative, mut rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return None;
        }
        let number: f64 = rest[..num_len].parse().ok()?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += number * scale;
    }
    let nanos = total.round() as i128;
    Some(if negative { -nanos } else { nanos })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(parse_duration("15s"), Some(15_000_000_000));
        assert_eq!(parse_duration("1m30s"), Some(90_000_000_000));
        assert_eq!(parse_duration("-2s"), Some(-2_000_000_000));
        assert_eq!(parse_duration("0"), Some(0));
        assert_eq!(parse_duration("1.5h"), Some(5_400_000_000_000));
        assert_eq!(parse_duration("abc"), None);
        assert_eq!(parse_duration("10"), None);
        assert_eq!(parse_duration(""), None);
    }
}
