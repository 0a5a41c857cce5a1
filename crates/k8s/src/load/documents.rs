//! A file's text into its documents (YAML or JSON value trees), and each document or
//! list item into objects: lists flattened, names for messages.

use super::position::{Origin, PlacedLocalizer};
use super::{LoadError, MAX_LIST_DEPTH, Manifests, Source, json, parse_object};
use serde_json::Value;

/// Parses YAML text into its non-empty documents, under generous but finite limits
/// (so a hostile file fails with a message, not an exhausted machine).
pub fn parse_yaml_documents(text: &str, file: &str) -> Result<Vec<Value>, LoadError> {
    parse_yaml_documents_at(text, file, &Origin::file())
}

/// [`parse_yaml_documents`] of a piece of the file whose lines are where `origin` says:
/// the parser's locations are written as the file's.
pub(super) fn parse_yaml_documents_at(
    text: &str,
    file: &str,
    origin: &Origin,
) -> Result<Vec<Value>, LoadError> {
    let docs: Vec<Value> =
        serde_saphyr::from_multiple_with_options(text, yaml_options()).map_err(|e| {
            let localizer = PlacedLocalizer { origin };
            let formatter = serde_saphyr::DefaultMessageFormatter.with_localizer(&localizer);
            let rendered = e.render_with_options(serde_saphyr::RenderOptions::new(&formatter));
            // The renderer adds a source excerpt on later lines; the first says it all.
            let first = rendered.lines().next().unwrap_or("");
            LoadError::Yaml {
                file: file.to_string(),
                message: first.strip_prefix("error: ").unwrap_or(first).to_string(),
            }
        })?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

/// The YAML parser's options: YAML 1.2 booleans (`true`/`false` only, so
/// `nodeTaintsPolicy: y` stays the string "y"), and generous but finite budgets.
pub(super) fn yaml_options() -> serde_saphyr::Options {
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    if let Some(budget) = options.budget.as_mut() {
        budget.max_events = 50_000_000;
        budget.max_nodes = 20_000_000;
        budget.max_documents = 200_000;
        budget.max_total_scalar_bytes = 512 * 1024 * 1024;
    }
    options
}

/// The JSON type name of a value, for messages.
pub(super) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The documents of a file: JSON (one object, an array, or a `kubectl cluster-info dump`
/// stream) through serde_json, anything else through the YAML parser.
pub fn parse_documents(text: &str, file: &str) -> Result<Vec<Value>, LoadError> {
    if json::looks_like_json(text) {
        json::documents(text, file)
    } else {
        parse_yaml_documents(text, file)
    }
}

/// Whether `value` is a list: `kind: List`, or a typed list (`PodList`, any `*List`)
/// holding `items`.
pub(super) fn is_list(kind: &str, value: &Value) -> bool {
    kind == "List" || (kind.ends_with("List") && value.get("items").is_some())
}

/// One document, or one item of a list: lists are flattened (their items take the list's
/// kind and apiVersion when they leave theirs out, as the API's typed lists do).
pub(super) fn parse_document(
    value: &Value,
    source: &Source,
    list: Option<(&str, &str)>,
    depth: usize,
    out: &mut Manifests,
) -> Result<(), LoadError> {
    let kind = value.get("kind").and_then(Value::as_str);
    let Some(kind) = kind.or(list.map(|(k, _)| k)) else {
        return Err(LoadError::MissingKind {
            file: source.file.clone(),
            document: source.document,
        });
    };
    if !is_list(kind, value) {
        if value.get("kind").is_some() || list.is_none() {
            return parse_object(value, source.clone(), out);
        }
        // A typed list's item: kind and apiVersion from the list.
        let mut typed = value.clone();
        if let (Some(map), Some((kind, api_version))) = (typed.as_object_mut(), list) {
            map.insert("kind".into(), Value::String(kind.into()));
            map.entry("apiVersion")
                .or_insert_with(|| Value::String(api_version.into()));
        }
        return parse_object(&typed, source.clone(), out);
    }
    if depth >= MAX_LIST_DEPTH {
        return Err(LoadError::TooDeep {
            file: source.file.clone(),
            document: source.document,
        });
    }
    let items = match value.get("items") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(LoadError::NotAList {
                file: source.file.clone(),
                document: source.document,
                kind: kind.to_string(),
                found: type_name(other),
            });
        }
    };
    let item_kind = kind.strip_suffix("List").filter(|k| !k.is_empty());
    let api_version = value
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    for (j, item) in items.iter().enumerate() {
        let source = Source {
            item: Some(source.item.unwrap_or(j)),
            ..source.clone()
        };
        parse_document(
            item,
            &source,
            item_kind.map(|k| (k, api_version)),
            depth + 1,
            out,
        )?;
    }
    Ok(())
}

/// `kind/name` for messages, as kubectl names objects; control characters escaped, so a
/// hostile name cannot drive the terminal.
pub fn object_name(kind: &str, value: &Value) -> String {
    let name = value.pointer("/metadata/name").and_then(Value::as_str);
    let generate = value
        .pointer("/metadata/generateName")
        .and_then(Value::as_str);
    let name = match (name, generate) {
        (Some(n), _) if !n.is_empty() => escape_control(n),
        (_, Some(g)) if !g.is_empty() => format!("{}<generated>", escape_control(g)),
        _ => "<unnamed>".to_string(),
    };
    let kind = escape_control(&kind.to_lowercase());
    match value.pointer("/metadata/namespace").and_then(Value::as_str) {
        Some(ns) => format!("{kind}/{name} (namespace {})", escape_control(ns)),
        None => format!("{kind}/{name}"),
    }
}

/// `s` with control characters (and only those) written as Rust escapes (`\n`,
/// `\u{1b}`), for printing names that came from input.
pub fn escape_control(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}
