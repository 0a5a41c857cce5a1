//! Strict decoding, as kube-scheduler decodes its configuration: a type error or an
//! unknown field anywhere is an error naming the field path.

use super::ParseError;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Decodes `value` as `T`; errors name the field under `prefix` (`profiles[0].foo`).
pub(crate) fn decode<T: DeserializeOwned>(value: &Value, prefix: &str) -> Result<T, ParseError> {
    let mut unknown: Option<String> = None;
    let mut note = |path: serde_ignored::Path<'_>| {
        if unknown.is_none() {
            unknown = Some(render(&path));
        }
    };
    // One callback type for every `T`: a closure's own type would instantiate each
    // nested type's deserializer again per root type.
    let mut note: &mut dyn FnMut(serde_ignored::Path<'_>) = &mut note;
    let result: Result<T, _> =
        serde_path_to_error::deserialize(serde_ignored::Deserializer::new(value, &mut note));
    let typed = result.map_err(|e| {
        let path = e.path().to_string();
        ParseError {
            field: join(prefix, if path == "." { "" } else { &path }),
            message: e.into_inner().to_string(),
        }
    })?;
    if let Some(field) = unknown {
        return Err(ParseError {
            field: join(prefix, &field),
            message: "unknown field".into(),
        });
    }
    Ok(typed)
}

/// `prefix` and a path inside it, joined as apimachinery prints field paths.
pub(crate) fn join(prefix: &str, inner: &str) -> String {
    if prefix.is_empty() {
        inner.to_string()
    } else if inner.is_empty() {
        prefix.to_string()
    } else if inner.starts_with('[') {
        format!("{prefix}{inner}")
    } else {
        format!("{prefix}.{inner}")
    }
}

fn render(path: &serde_ignored::Path<'_>) -> String {
    use serde_ignored::Path;
    match path {
        Path::Root => String::new(),
        Path::Seq { parent, index } => format!("{}[{index}]", render(parent)),
        Path::Map { parent, key } => join(&render(parent), key),
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => render(parent),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PodTopologySpreadArgs;
    use serde_json::json;

    #[test]
    fn unknown_fields_are_named_under_the_prefix() {
        let e = decode::<PodTopologySpreadArgs>(
            &json!({"defaultConstraints": [{"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule", "bogus": 1}]}),
            "profiles[0].pluginConfig[0].args",
        )
        .expect_err("unknown field");
        assert_eq!(
            e.to_string(),
            "profiles[0].pluginConfig[0].args.defaultConstraints[0].bogus: unknown field"
        );
        let e = decode::<PodTopologySpreadArgs>(&json!({"defaultingType": 3}), "args")
            .expect_err("type error");
        assert_eq!(e.field, "args.defaultingType");
    }
}
