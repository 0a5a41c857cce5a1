//! Fault injection: failed requests, transient binding conflicts, latency and
//! watch streams that end early. Decisions come from one seeded generator, so a
//! run with the same seed and the same request order fails the same requests.

use std::time::Duration;

use crate::error::{ApiError, GroupResource};
use crate::request::RequestInfo;
use crate::util::Rng;

/// A rule failing a fraction of matching requests with `answer`.
#[derive(Debug, Clone, PartialEq)]
struct ErrorRule {
    verb: Option<String>,
    resource: Option<String>,
    fraction: f64,
    answer: Answer,
}

/// How an [`ErrorRule`] fails a request.
#[derive(Debug, Clone, PartialEq)]
enum Answer {
    /// 500 InternalError.
    Internal,
    /// 429 with `Retry-After`.
    Throttle(Duration),
    /// 403 as RBAC refuses a request it does not allow.
    Forbid,
    /// 404 as a server that does not serve the resource (an older release).
    NotServed,
}

/// The faults to inject, built with named methods and set on a running server
/// with [`FakeApi::set_faults`](crate::FakeApi::set_faults).
///
/// ```
/// use std::time::Duration;
/// use topospread_fakeapi::Faults;
/// let faults = Faults::seeded(7)
///     .fail_requests(Some("create"), Some("pods/binding"), 0.05)
///     .bind_conflicts(0.05)
///     .latency(Duration::from_millis(2))
///     .drop_watches_after(Duration::from_secs(5));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Faults {
    seed: u64,
    errors: Vec<ErrorRule>,
    bind_conflicts: f64,
    latency: Duration,
    watch_lifetime: Option<Duration>,
}

impl Faults {
    /// No faults, drawing from a generator seeded with `seed`.
    pub fn seeded(seed: u64) -> Self {
        Faults {
            seed,
            ..Faults::default()
        }
    }

    /// Fails `fraction` (0..=1) of the requests with this Kubernetes verb (`get`,
    /// `list`, `watch`, `create`, `update`, `patch`, `delete`; `None`: any) on this
    /// resource (`pods`, `pods/binding`, `leases`; `None`: any) with 500.
    pub fn fail_requests(
        mut self,
        verb: Option<&str>,
        resource: Option<&str>,
        fraction: f64,
    ) -> Self {
        self.errors.push(ErrorRule {
            verb: verb.map(str::to_owned),
            resource: resource.map(str::to_owned),
            fraction,
            answer: Answer::Internal,
        });
        self
    }

    /// Answers every request with this verb (`None`: any) on this resource (`pods`,
    /// `limitranges`) with 403 Forbidden, worded as RBAC words a refusal, as for a user
    /// whose roles do not grant it.
    pub fn forbid(mut self, verb: Option<&str>, resource: &str) -> Self {
        self.errors.push(ErrorRule {
            verb: verb.map(str::to_owned),
            resource: Some(resource.to_owned()),
            fraction: 1.0,
            answer: Answer::Forbid,
        });
        self
    }

    /// Answers every request on this resource with 404, as an API server of a release
    /// that does not serve it.
    pub fn not_served(mut self, resource: &str) -> Self {
        self.errors.push(ErrorRule {
            verb: None,
            resource: Some(resource.to_owned()),
            fraction: 1.0,
            answer: Answer::NotServed,
        });
        self
    }

    /// Answers `fraction` of the requests with this verb on this resource (`None`:
    /// any) with 429 TooManyRequests and `Retry-After: <seconds>`, as an overloaded API
    /// server's Priority and Fairness does; the request is not carried out.
    pub fn throttle(
        mut self,
        verb: Option<&str>,
        resource: Option<&str>,
        fraction: f64,
        retry_after: Duration,
    ) -> Self {
        self.errors.push(ErrorRule {
            verb: verb.map(str::to_owned),
            resource: resource.map(str::to_owned),
            fraction,
            answer: Answer::Throttle(retry_after),
        });
        self
    }

    /// Answers `fraction` of `pods/binding` requests with a transient 409 Conflict
    /// ("the object has been modified"), leaving the pod unbound. Distinct from the
    /// permanent "already assigned" conflict.
    pub fn bind_conflicts(mut self, fraction: f64) -> Self {
        self.bind_conflicts = fraction;
        self
    }

    /// Delays every request (and the start of every watch) by this much.
    pub fn latency(mut self, latency: Duration) -> Self {
        self.latency = latency;
        self
    }

    /// Ends every watch stream this long after it started, as an API server
    /// restart or a load balancer's idle timeout would.
    pub fn drop_watches_after(mut self, lifetime: Duration) -> Self {
        self.watch_lifetime = Some(lifetime);
        self
    }

    /// The watch lifetime set by [`Faults::drop_watches_after`].
    pub(crate) fn watch_lifetime(&self) -> Option<Duration> {
        self.watch_lifetime
    }
}

/// What the faults decided for one request.
#[derive(Debug, Default)]
pub(crate) struct Verdict {
    pub(crate) latency: Duration,
    pub(crate) error: Option<ApiError>,
}

/// The active faults and their generator.
#[derive(Debug)]
pub(crate) struct FaultState {
    faults: Faults,
    rng: Rng,
}

impl FaultState {
    /// The fault-free state.
    pub(crate) fn new() -> Self {
        FaultState {
            faults: Faults::default(),
            rng: Rng::new(0),
        }
    }

    /// Replaces the faults and reseeds the generator.
    pub(crate) fn set(&mut self, faults: Faults) {
        self.rng = Rng::new(faults.seed);
        self.faults = faults;
    }

    /// The faults in force.
    pub(crate) fn faults(&self) -> &Faults {
        &self.faults
    }

    /// Decides the fate of one request.
    pub(crate) fn decide(&mut self, info: &RequestInfo) -> Verdict {
        let mut verdict = Verdict {
            latency: self.faults.latency,
            error: None,
        };
        let resource = info.target.as_ref().map(|t| match &t.subresource {
            Some(sub) => format!("{}/{sub}", t.resource),
            None => t.resource.clone(),
        });
        for rule in &self.faults.errors {
            let verb_ok = rule.verb.as_deref().is_none_or(|v| v == info.verb);
            let res_ok = rule
                .resource
                .as_deref()
                .is_none_or(|r| resource.as_deref() == Some(r));
            if verb_ok && res_ok && self.rng.chance(rule.fraction) {
                verdict.error = Some(match rule.answer {
                    Answer::Throttle(after) => ApiError::Throttled {
                        retry_after_seconds: after.as_secs().max(1),
                    },
                    Answer::Forbid => ApiError::RbacForbidden {
                        resource: GroupResource {
                            group: "",
                            resource: resource.clone().unwrap_or_default(),
                        },
                        verb: info.verb.clone(),
                        api_group: info
                            .target
                            .as_ref()
                            .map(|t| t.group.clone())
                            .unwrap_or_default(),
                        namespace: info.target.as_ref().and_then(|t| t.namespace.clone()),
                    },
                    Answer::NotServed => ApiError::NoRoute,
                    Answer::Internal => ApiError::Internal {
                        message: format!(
                            "injected fault on {} {}",
                            info.verb,
                            resource.as_deref().unwrap_or("(non-resource)")
                        ),
                    },
                });
                return verdict;
            }
        }
        if info.verb == "create"
            && resource.as_deref() == Some("pods/binding")
            && self.rng.chance(self.faults.bind_conflicts)
        {
            let name = info
                .target
                .as_ref()
                .and_then(|t| t.name.clone())
                .unwrap_or_default();
            verdict.error = Some(ApiError::Conflict {
                resource: GroupResource {
                    group: "",
                    resource: "pods/binding".into(),
                },
                name,
                reason: "the object has been modified; please apply your changes to the latest \
                         version and try again"
                    .into(),
            });
        }
        verdict
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use axum::http::Method;

    #[test]
    fn same_seed_same_failures() {
        let bind = RequestInfo::parse(
            &Method::POST,
            &"/api/v1/namespaces/d/pods/p/binding".parse().unwrap(),
        );
        let get = RequestInfo::parse(
            &Method::GET,
            &"/api/v1/namespaces/d/pods/p".parse().unwrap(),
        );
        let run = || {
            let mut st = FaultState::new();
            st.set(Faults::seeded(3).bind_conflicts(0.5).fail_requests(
                Some("get"),
                Some("pods"),
                0.5,
            ));
            (0..64)
                .map(|i| {
                    st.decide(if i % 2 == 0 { &bind } else { &get })
                        .error
                        .map(|e| e.code())
                })
                .collect::<Vec<_>>()
        };
        let a = run();
        assert_eq!(a, run());
        assert!(a.contains(&Some(409)) && a.contains(&Some(500)) && a.contains(&None));
        let mut storm = FaultState::new();
        storm.set(Faults::seeded(1).throttle(None, None, 1.0, Duration::from_secs(2)));
        let e = storm.decide(&get).error.unwrap();
        assert_eq!(e.code(), 429);
        let response = axum::response::IntoResponse::into_response(e);
        assert_eq!(response.headers()["retry-after"], "2");
        let mut quiet = FaultState::new();
        assert!(quiet.decide(&bind).error.is_none());
    }
}
