//! A stable-toolchain stand-in for the cargo-fuzz target `fuzz/fuzz_targets/validate.rs`:
//! the same pipeline ([`validate_pipeline`]: parse -> validate -> lint -> snapshot ->
//! cluster lints) over mutations of the `validate` fixtures (byte flips, deletions,
//! splices, dictionary tokens). A few hundred inputs run with `cargo test`; for a long run:
//!
//! ```sh
//! FUZZ_SMOKE_SECONDS=600 cargo test --release -p topospread-k8s --test it -- fuzz_smoke --nocapture
//! ```

use std::path::PathBuf;
use std::time::{Duration, Instant};

use topospread_k8s::fuzz::validate_pipeline;

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n.max(1) as u64).unwrap_or(0)
    }
}

const TOKENS: &[&str] = &[
    "maxSkew: 0",
    "minDomains: 99",
    "whenUnsatisfiable: ScheduleAnyway",
    "topologyKey: \"\"",
    "matchLabelKeys: [pod-template-hash, app]",
    "labelSelector: {}",
    "operator: Exists",
    "nodeName: node9",
    "kind: List",
    "- ",
    "\n---\n",
    "{",
    "]",
    ": ",
    "&a ",
    "*a",
    "!!str ",
    "\t",
    "\u{feff}",
];

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>], input: &mut Vec<u8>) {
    for _ in 0..=rng.below(4) {
        let len = input.len();
        match rng.below(5) {
            0 if len > 0 => {
                let i = rng.below(len);
                input[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                let n = rng.below(len - i).min(32);
                input.drain(i..i + n);
            }
            2 => {
                let t = TOKENS[rng.below(TOKENS.len())].as_bytes();
                let i = rng.below(len + 1);
                input.splice(i..i, t.iter().copied());
            }
            3 => {
                let other = &seeds[rng.below(seeds.len())];
                if !other.is_empty() {
                    let from = rng.below(other.len());
                    let n = rng.below(other.len() - from).min(256);
                    let i = rng.below(len + 1);
                    input.splice(i..i, other[from..from + n].iter().copied());
                }
            }
            _ => {
                // Duplicate a line: repeated keys, repeated list items.
                let text = String::from_utf8_lossy(input).into_owned();
                let lines: Vec<&str> = text.lines().collect();
                if !lines.is_empty() {
                    let i = rng.below(lines.len());
                    let mut out = lines.clone();
                    out.insert(i, lines[i]);
                    *input = out.join("\n").into_bytes();
                }
            }
        }
    }
}

#[test]
fn mutated_fixtures_never_panic() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/fixtures/validate");
    let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read(e.path()).ok())
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty());
    let seconds: u64 = std::env::var("FUZZ_SMOKE_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ seconds);
    let mut runs = 0u64;
    while runs < 300 || Instant::now() < deadline {
        let mut input = seeds[rng.below(seeds.len())].clone();
        mutate(&mut rng, &seeds, &mut input);
        validate_pipeline(&String::from_utf8_lossy(&input));
        runs += 1;
    }
    eprintln!("fuzz_smoke: {runs} inputs, no panic");
}
