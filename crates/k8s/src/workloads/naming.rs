//! Names and hashes as the controllers make them: FNV-32a hashes encoded with
//! apimachinery's "safe" alphabet (`rand.SafeEncodeString`) and random-looking but
//! deterministic name suffixes (`names.SimpleNameGenerator` draws from the same alphabet).

/// apimachinery's `util/rand` alphabet: no vowels (no words), no `0 1 3` (no look-alikes).
const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// FNV-32a of `bytes` (`hash/fnv.New32a`).
pub(crate) fn fnv32a(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in bytes {
        h ^= u32::from(*b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// `rand.SafeEncodeString`: every byte mapped into the safe alphabet.
pub(crate) fn safe_encode(s: &str) -> String {
    s.bytes()
        .map(|b| char::from(ALPHANUMS[usize::from(b) % ALPHANUMS.len()]))
        .collect()
}

/// `controller.ComputeHash`: the deployment controller's `pod-template-hash`.
///
/// Upstream hashes the Go struct as printed by `spew` (`DeepHashObject`), which has no
/// equivalent outside Go; here the template is rendered as JSON with sorted keys (a
/// stable string for the same template), hashed with FNV-32a, the collision count
/// appended as upstream does, and the decimal hash safe-encoded. The value has the same
/// shape and stability as upstream's, not the same digits.
pub fn pod_template_hash(
    template_json: &serde_json::Value,
    collision_count: Option<i32>,
) -> String {
    let mut bytes = canonical_json(template_json).into_bytes();
    if let Some(c) = collision_count {
        bytes.extend_from_slice(&c.to_le_bytes());
    }
    safe_encode(&fnv32a(&bytes).to_string())
}

/// JSON with object keys sorted, whatever map order serde_json was built with.
fn canonical_json(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let body: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical_json(&m[k])))
                .collect();
            format!("{{{}}}", body.join(","))
        }
        Value::Array(a) => {
            let body: Vec<String> = a.iter().map(canonical_json).collect();
            format!("[{}]", body.join(","))
        }
        other => other.to_string(),
    }
}

/// A 5-character suffix for pod `index` of `owner`, random-looking but fixed by `seed`.
pub fn suffix(seed: u64, owner: &str, index: usize, attempt: u32) -> String {
    let mut h = fnv32a(format!("{seed}/{owner}/{index}/{attempt}").as_bytes());
    let n = ALPHANUMS.len() as u32;
    (0..5)
        .map(|_| {
            let c = ALPHANUMS[(h % n) as usize];
            h = (h / n) ^ fnv32a(&h.to_le_bytes()).rotate_left(7);
            char::from(c)
        })
        .collect()
}

/// `maxGeneratedNameLength`: a generateName prefix is cut to this many bytes, so that
/// prefix and suffix fit the 63 characters of a label value.
const MAX_GENERATED_PREFIX: usize = 63 - 5;

/// The name the API server gives an object created with only `generateName`
/// (`names.SimpleNameGenerator`): the prefix, cut to 58 bytes, then 5 random-looking
/// characters, here fixed by `seed`, the prefix and the `index`-th such object.
pub(crate) fn generated_name(seed: u64, prefix: &str, index: usize, attempt: u32) -> String {
    let mut cut = prefix.len().min(MAX_GENERATED_PREFIX);
    while !prefix.is_char_boundary(cut) {
        cut -= 1;
    }
    let prefix = &prefix[..cut];
    format!("{prefix}{}", suffix(seed, prefix, index, attempt))
}

/// A deterministic UID-shaped string for an object that exists only in the simulation.
pub(crate) fn uid(kind: &str, namespace: &str, name: &str) -> String {
    let a = fnv32a(format!("{kind}/{namespace}/{name}").as_bytes());
    let b = fnv32a(format!("{name}/{namespace}/{kind}").as_bytes());
    let c = fnv32a(format!("{namespace}|{kind}|{name}").as_bytes());
    format!(
        "{a:08x}-{:04x}-4{:03x}-8{:03x}-{:08x}{:04x}",
        b >> 16,
        b & 0xfff,
        c >> 20,
        c,
        a >> 16
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_matches_reference_vectors() {
        assert_eq!(fnv32a(b""), 0x811c_9dc5);
        assert_eq!(fnv32a(b"a"), 0xe40c_292c);
        assert_eq!(fnv32a(b"foobar"), 0xbf9c_f968);
    }

    #[test]
    fn safe_encoding_uses_the_safe_alphabet() {
        // '0' is byte 48: 48 % 27 = 21 -> '4'.
        assert_eq!(safe_encode("0"), "4");
        let h = pod_template_hash(&serde_json::json!({"a": 1}), None);
        assert!(h.bytes().all(|b| ALPHANUMS.contains(&b)));
        assert_eq!(h, pod_template_hash(&serde_json::json!({"a": 1}), None));
        assert_ne!(h, pod_template_hash(&serde_json::json!({"a": 1}), Some(1)));
    }

    #[test]
    fn suffixes_are_stable_and_safe() {
        let s = suffix(0, "web-abc", 0, 0);
        assert_eq!(s.len(), 5);
        assert_eq!(s, suffix(0, "web-abc", 0, 0));
        assert_ne!(s, suffix(1, "web-abc", 0, 0));
        assert!(s.bytes().all(|b| ALPHANUMS.contains(&b)));
    }
}
