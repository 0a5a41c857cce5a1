//! ImageLocality: favour nodes that already hold the pod's images, scaled down for
//! images that are everywhere (upstream's `imagelocality` plugin).

use std::borrow::Cow;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ContainerImage, PodSpec};

use crate::plugins::noderesources::resource_allocation::MAX_NODE_SCORE;
use crate::snapshot::ImageStateSummary;

const MB: i64 = 1024 * 1024;
/// Below this sum of scaled image sizes a node scores 0 (23 MiB).
pub(crate) const MIN_THRESHOLD: i64 = 23 * MB;
/// Per container, at or above this sum a node scores 100 (1000 MiB).
pub(crate) const MAX_CONTAINER_THRESHOLD: i64 = 1000 * MB;

/// The image states of a cluster, by image name as nodes report them
/// (`status.images[].names`), from the nodes' image lists in the order the nodes were
/// added: a name's size is the first reported, and each node counts once per name.
pub fn image_state_summaries<'a, I>(nodes: I) -> BTreeMap<Box<str>, ImageStateSummary>
where
    I: IntoIterator<Item = &'a [ContainerImage]>,
{
    let mut states: BTreeMap<Box<str>, (ImageStateSummary, usize)> = BTreeMap::new();
    for (node, images) in nodes.into_iter().enumerate() {
        for image in images {
            let size = image.size_bytes.unwrap_or(0);
            for name in image.names.iter().flatten() {
                let entry = states
                    .entry(name.as_str().into())
                    .or_insert((ImageStateSummary { size, num_nodes: 0 }, usize::MAX));
                if entry.1 != node {
                    entry.0.num_nodes += 1;
                    entry.1 = node;
                }
            }
        }
    }
    states
        .into_iter()
        .map(|(name, (state, _))| (name, state))
        .collect()
}

/// The name a node would report for `image`: `:latest` is added when the reference
/// has no tag (no `:` after the last `/`). Digests are left alone.
pub(crate) fn normalized_image_name(image: &str) -> Cow<'_, str> {
    let last_colon = image.rfind(':');
    let last_slash = image.rfind('/');
    // Go's LastIndex gives -1 when absent; `None < Some(_)` mirrors that ordering.
    if last_colon <= last_slash {
        Cow::Owned(format!("{image}:latest"))
    } else {
        Cow::Borrowed(image)
    }
}

/// The pod's images, init containers first, as ImageLocality counts them.
pub fn pod_images(spec: &PodSpec) -> Vec<&str> {
    spec.init_containers
        .iter()
        .flatten()
        .chain(&spec.containers)
        .map(|c| c.image.as_deref().unwrap_or(""))
        .collect()
}

/// An image's size scaled by the share of nodes that have it, truncated
/// (`int64(float64(size) * numNodes / totalNumNodes)`).
pub(crate) fn scaled_image_score(state: ImageStateSummary, total_num_nodes: usize) -> i64 {
    if total_num_nodes == 0 {
        return 0;
    }
    let spread = state.num_nodes as f64 / total_num_nodes as f64;
    (state.size as f64 * spread) as i64
}

/// The node's score from the sum of its scaled image sizes: clamped to
/// [23 MiB, 1000 MiB × containers] and mapped linearly (integer division) to 0..=100.
pub(crate) fn calculate_priority(sum_scores: i64, num_containers: usize) -> i64 {
    let containers = i64::try_from(num_containers).unwrap_or(i64::MAX);
    let max_threshold = MAX_CONTAINER_THRESHOLD.wrapping_mul(containers);
    let sum = if sum_scores < MIN_THRESHOLD {
        MIN_THRESHOLD
    } else if sum_scores > max_threshold {
        max_threshold
    } else {
        sum_scores
    };
    MAX_NODE_SCORE
        .wrapping_mul(sum.wrapping_sub(MIN_THRESHOLD))
        .wrapping_div(max_threshold.wrapping_sub(MIN_THRESHOLD))
}

/// ImageLocality's score for one node. `images` is [`pod_images`] (every init and
/// regular container, repeats included); `node_image` says whether the node holds a
/// (normalized) image name and, if so, its cluster-wide state; `total_num_nodes` is
/// the number of nodes in the snapshot.
pub(crate) fn image_locality_score<S, F>(images: &[S], node_image: F, total_num_nodes: usize) -> i64
where
    S: AsRef<str>,
    F: Fn(&str) -> Option<ImageStateSummary>,
{
    let sum = images
        .iter()
        .filter_map(|image| node_image(&normalized_image_name(image.as_ref())))
        .map(|state| scaled_image_score(state, total_num_nodes))
        .fold(0_i64, i64::wrapping_add);
    calculate_priority(sum, images.len())
}

/// The plugin's registry name.
pub const NAME: &str = "ImageLocality";

/// The ImageLocality plugin (Score only).
#[derive(Clone, Copy, Debug)]
pub struct ImageLocality {
    /// Init containers' images count, in the sum and in the maximum (kubernetes PR
    /// 123366, 1.30); earlier releases score the regular containers only.
    count_init_containers: bool,
}

impl Default for ImageLocality {
    fn default() -> Self {
        Self {
            count_init_containers: true,
        }
    }
}

impl ImageLocality {
    /// The plugin as `release` runs it.
    pub(crate) fn for_release(release: crate::version::KubernetesVersion) -> Self {
        Self {
            count_init_containers: release.image_locality_counts_init_containers(),
        }
    }

    /// The pod's images this release scores.
    fn images<'p>(&self, pod: &'p crate::api::Pod) -> &'p [Box<str>] {
        if self.count_init_containers {
            &pod.images
        } else {
            pod.images.get(pod.init_images..).unwrap_or(&[])
        }
    }
}

impl crate::framework::Plugin for ImageLocality {
    fn name(&self) -> &'static str {
        NAME
    }
}

impl crate::framework::ScorePlugin for ImageLocality {
    fn score(
        &self,
        _: &crate::framework::CycleState,
        pod: &crate::api::Pod,
        node: &crate::snapshot::NodeInfo,
        snapshot: &crate::snapshot::Snapshot,
    ) -> Result<i64, crate::framework::Status> {
        let images = self.images(pod);
        if node.node.images.is_empty() {
            // Nothing to look up: the score of a node holding none of the images.
            return Ok(calculate_priority(0, images.len()));
        }
        let on_node = |name: &str| {
            node.node
                .images
                .iter()
                .any(|i| i.names.iter().any(|n| &**n == name))
                .then(|| snapshot.image_state(name))
                .flatten()
        };
        Ok(image_locality_score(
            images,
            on_node,
            snapshot.nodes().len(),
        ))
    }

    fn score_nodes(
        &self,
        state: &crate::framework::CycleState,
        pod: &crate::api::Pod,
        nodes: &[crate::snapshot::NodeId],
        snapshot: &crate::snapshot::Snapshot,
        out: &mut Vec<crate::framework::NodeScore>,
    ) -> Result<(), crate::framework::Status> {
        if !snapshot.has_images() {
            // No node holds an image: every node scores as one holding none.
            let score = calculate_priority(0, self.images(pod).len());
            out.extend(
                nodes
                    .iter()
                    .map(|&node| crate::framework::NodeScore { node, score }),
            );
            return Ok(());
        }
        crate::framework::score_each(nodes, snapshot, out, |node| {
            crate::framework::ScorePlugin::score(self, state, pod, node, snapshot)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::json;

    use super::*;

    fn images(value: serde_json::Value) -> Vec<ContainerImage> {
        serde_json::from_value(value).unwrap()
    }

    fn spec(images: &[&str], init: &[&str]) -> PodSpec {
        let c = |i: &&str| json!({"name": "c", "image": i});
        serde_json::from_value(json!({
            "initContainers": init.iter().map(c).collect::<Vec<_>>(),
            "containers": images.iter().map(c).collect::<Vec<_>>(),
        }))
        .unwrap()
    }

    /// TestImageLocalityPriority's nodes and pods, with today's per-container maximum.
    #[test]
    fn upstream_image_locality_table() {
        let node1 = images(json!([
            {"names": ["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], "sizeBytes": 40 * MB},
            {"names": ["gcr.io/300:latest", "gcr.io/300:v1"], "sizeBytes": 300 * MB},
            {"names": ["gcr.io/2000:latest"], "sizeBytes": 2000 * MB},
        ]));
        let node2 = images(json!([
            {"names": ["gcr.io/250:latest"], "sizeBytes": 250 * MB},
            {"names": ["gcr.io/10:latest", "gcr.io/10:v1"], "sizeBytes": 10 * MB},
        ]));
        let node3: Vec<ContainerImage> = vec![];
        let score = |pod: &PodSpec, nodes: &[&[ContainerImage]]| -> Vec<i64> {
            let states = image_state_summaries(nodes.iter().copied());
            nodes
                .iter()
                .map(|node| {
                    let held: BTreeSet<&str> = node
                        .iter()
                        .flat_map(|i| i.names.iter().flatten().map(String::as_str))
                        .collect();
                    let lookup = |name: &str| {
                        held.contains(name)
                            .then(|| states.get(name).copied())
                            .flatten()
                    };
                    image_locality_score(&pod_images(pod), lookup, nodes.len())
                })
                .collect()
        };
        let two = [node1.as_slice(), node2.as_slice()];
        // 40M/2 < 23M → 0; 100·(250M/2 − 23M)/(2000M − 23M) = 5
        assert_eq!(
            score(&spec(&["gcr.io/40", "gcr.io/250"], &[]), &two),
            vec![0, 5]
        );
        // 100·((40M + 300M)/2 − 23M)/(2000M − 23M) = 7
        assert_eq!(
            score(&spec(&["gcr.io/40", "gcr.io/300"], &[]), &two),
            vec![7, 0]
        );
        // 100·(2000M/2 − 23M)/(2000M − 23M) = 49
        assert_eq!(
            score(&spec(&["gcr.io/10", "gcr.io/2000"], &[]), &two),
            vec![49, 0]
        );
        // three nodes: 100·(2000M/3 − 23M)/(2000M − 23M) = 32
        let three = [node1.as_slice(), node2.as_slice(), node3.as_slice()];
        assert_eq!(
            score(&spec(&["gcr.io/10", "gcr.io/2000"], &[]), &three),
            vec![32, 0, 0]
        );
        // init containers count, in the sum and in the maximum: 100·(1150M − 23M)/1977M = 57
        assert_eq!(
            score(&spec(&["gcr.io/2000"], &["gcr.io/300"]), &two),
            vec![57, 0]
        );
        // past the maximum: 100
        assert_eq!(
            score(&spec(&["gcr.io/2000"], &[]), &[node1.as_slice()]),
            vec![100]
        );
    }

    #[test]
    fn summaries_count_nodes_once_and_keep_the_first_size() {
        let a = images(json!([{"names": ["x:1", "x:1"], "sizeBytes": 10}]));
        let b = images(json!([{"names": ["x:1"], "sizeBytes": 99}, {"names": ["y:1"]}]));
        let states = image_state_summaries([a.as_slice(), b.as_slice()]);
        assert_eq!(
            states.get("x:1"),
            Some(&ImageStateSummary {
                size: 10,
                num_nodes: 2
            })
        );
        assert_eq!(
            states.get("y:1"),
            Some(&ImageStateSummary {
                size: 0,
                num_nodes: 1
            })
        );
    }

    #[test]
    fn normalized_image_names() {
        // TestNormalizedImageName.
        let digest = "root@sha256:4813494d137e1631bba301d5acab6e7bb7aa74ce1185d456565ef51d737677b2";
        for (input, output) in [
            ("root", "root:latest"),
            ("gcr.io:5000/root", "gcr.io:5000/root:latest"),
            ("root:tag", "root:tag"),
            (digest, digest),
        ] {
            assert_eq!(normalized_image_name(input), output);
        }
    }

    #[test]
    fn priority_edges() {
        assert_eq!(calculate_priority(0, 1), 0);
        assert_eq!(calculate_priority(MIN_THRESHOLD, 1), 0);
        assert_eq!(calculate_priority(MAX_CONTAINER_THRESHOLD, 1), 100);
        assert_eq!(calculate_priority(i64::MAX, 3), 100);
        assert_eq!(
            scaled_image_score(
                ImageStateSummary {
                    size: 100,
                    num_nodes: 1
                },
                0
            ),
            0
        );
        assert_eq!(
            scaled_image_score(
                ImageStateSummary {
                    size: 100,
                    num_nodes: 1
                },
                3
            ),
            33
        );
    }
}
