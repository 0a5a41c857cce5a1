//! Invariants of the scorers and the Fit filter over random inputs.

use proptest::prelude::*;

use super::balanced_allocation::balanced_allocation_score;
use super::fit::{IgnoredResources, fits, insufficient_resources};
use super::least_allocated::{least_allocated_score, least_requested_score};
use super::most_allocated::{most_allocated_score, most_requested_score};
use super::requested_to_capacity_ratio::{
    UtilizationShapePoint, requested_to_capacity_ratio_score,
};
use super::resource_allocation::ResourceSpec;
use super::tests::resources;

proptest! {
    #[test]
    fn per_resource_scores_stay_in_range(requested in 0i64..1 << 40, capacity in 0i64..1 << 40) {
        for score in [
            least_requested_score(requested, capacity),
            most_requested_score(requested, capacity),
        ] {
            prop_assert!((0..=100).contains(&score));
        }
    }

    #[test]
    fn node_scores_stay_in_range(
        pairs in prop::collection::vec((0i64..1 << 40, 0i64..1 << 40, 1i64..=100), 0..5),
    ) {
        let requested: Vec<i64> = pairs.iter().map(|p| p.0).collect();
        let allocatable: Vec<i64> = pairs.iter().map(|p| p.1).collect();
        let specs: Vec<ResourceSpec> =
            pairs.iter().enumerate().map(|(i, p)| ResourceSpec::new(&format!("r{i}"), p.2)).collect();
        let shape = [
            UtilizationShapePoint { utilization: 0, score: 10 },
            UtilizationShapePoint { utilization: 100, score: 0 },
        ];
        for score in [
            least_allocated_score(&requested, &allocatable, &specs),
            most_allocated_score(&requested, &allocatable, &specs),
            balanced_allocation_score(&requested, &allocatable),
            requested_to_capacity_ratio_score(&requested, &allocatable, &specs, &shape),
        ] {
            prop_assert!((0..=100).contains(&score), "{score}");
        }
    }

    #[test]
    fn fit_reports_exactly_the_short_dimensions(
        want in (0i64..100, 0i64..100, 0i64..100, 0i64..100),
        used in (0i64..100, 0i64..100, 0i64..100, 0i64..100),
        have in (0i64..200, 0i64..200, 0i64..200, 0i64..200),
        pods in (0usize..5, 0i64..5),
    ) {
        let request = resources(want.0, want.1, 0, &[("example.com/x", want.3)], want.2);
        let on_node = resources(used.0, used.1, 0, &[("example.com/x", used.3)], used.2);
        let alloc = resources(have.0, have.1, pods.1, &[("example.com/x", have.3)], have.2);
        let short = insufficient_resources(&request, &alloc, &on_node, pods.0, &IgnoredResources::default());
        let mut expected = Vec::new();
        if i64::try_from(pods.0).unwrap_or(i64::MAX) + 1 > pods.1 {
            expected.push("pods");
        }
        for (name, w, u, h) in [
            ("cpu", want.0, used.0, have.0),
            ("memory", want.1, used.1, have.1),
            ("ephemeral-storage", want.2, used.2, have.2),
            ("example.com/x", want.3, used.3, have.3),
        ] {
            if w > 0 && w + u > h {
                expected.push(name);
            }
        }
        let got: Vec<&str> = short.iter().map(|r| &*r.resource).collect();
        prop_assert_eq!(got, expected);
        // The fast check Filter runs first agrees with the full list.
        for ignored in [IgnoredResources::default(), IgnoredResources::new(["example.com/x"], std::iter::empty::<&str>())] {
            prop_assert_eq!(
                fits(&request, &alloc, &on_node, pods.0, &ignored),
                insufficient_resources(&request, &alloc, &on_node, pods.0, &ignored).is_empty()
            );
        }
    }

    #[test]
    fn cpu_and_memory_are_read_as_the_general_path_reads_them(
        nz in (0i64..1 << 40, 0i64..1 << 40),
        used in (0i64..1 << 40, 0i64..1 << 40),
        have in (0i64..1 << 40, 0i64..1 << 40),
        want in (0i64..1 << 40, 0i64..1 << 40),
        use_requested in any::<bool>(),
    ) {
        use super::resource_allocation::{
            NodeResources, cpu_memory_amounts, default_resources, is_cpu_then_memory,
            resource_amounts,
        };
        let specs = default_resources();
        prop_assert!(is_cpu_then_memory(&specs));
        let requested = resources(used.0, used.1, 0, &[], 0);
        let allocatable = resources(have.0 * i64::from(have.0 % 3 != 0), have.1, 0, &[], 0);
        let node = NodeResources {
            allocatable: &allocatable,
            requested: &requested,
            non_zero_requested: crate::api::resources::NonZeroRequests {
                milli_cpu: nz.0,
                memory: nz.1,
            },
        };
        let wants = [want.0, want.1];
        let general: Vec<(i64, i64)> = resource_amounts(&node, &specs, &wants, use_requested).collect();
        prop_assert_eq!(general, cpu_memory_amounts(&node, &wants, use_requested).to_vec());
    }
}

proptest! {
    /// The default profile's two-resource paths give the general scorers' answers,
    /// zeros, overflow and over-commitment included.
    #[test]
    fn two_resource_paths_equal_the_general_scorers(
        amounts in prop::array::uniform2((
            prop_oneof![Just(0i64), 0i64..1 << 40, any::<i64>()],
            prop_oneof![Just(0i64), 1i64..1 << 40, any::<i64>()],
        )),
        weights in prop::array::uniform2(prop_oneof![1i64..=100, any::<i64>()]),
    ) {
        use super::balanced_allocation::balanced_score_of_two;
        use super::least_allocated::least_allocated_of_two;
        let requested = [amounts[0].0, amounts[1].0];
        let allocatable = [amounts[0].1, amounts[1].1];
        let specs = [ResourceSpec::new("cpu", weights[0]), ResourceSpec::new("memory", weights[1])];
        prop_assert_eq!(
            least_allocated_of_two(amounts, weights),
            least_allocated_score(&requested, &allocatable, &specs)
        );
        prop_assert_eq!(
            balanced_score_of_two(amounts),
            balanced_allocation_score(&requested, &allocatable)
        );
    }
}
