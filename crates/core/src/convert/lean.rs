//! Skipping, while an object is typed, what nothing here reads: its
//! `metadata.managedFields`, the API server's record of which manager set which field
//! (often the larger part of an object read from the API), is checked as k8s-openapi
//! reads it but never built, and the object is typed as if the field were left out.
//!
//! Only a value that does not decode is an error for the API server here: entries that
//! decode but are not valid (an unknown `operation`, say) its field manager replaces with
//! the live object's, as it does entries that fail to decode into field sets, so a
//! create is never refused for them. The check refuses exactly what does not decode.
//!
//! [`Skipping`] stands between the object's type and serde_json (or whatever reads the
//! text) only on the object's own map and its `metadata`; every other value is read
//! straight from the underlying deserializer, so nothing else pays for it. The loader
//! types files through it, the live reads type a cluster's lists and watch events.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde::Deserialize;
use serde::de::value::{BorrowedStrDeserializer, StringDeserializer, UnitDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// Which map a [`Skipping`] deserializer reads: the object's own, or its `metadata`.
#[derive(Clone, Copy)]
enum At {
    Object,
    Metadata,
}

/// A deserializer that reads an object as `de` does, except that its
/// `metadata.managedFields` is checked and read as absent.
pub struct Skipping<D> {
    de: D,
    at: At,
}

impl<D> Skipping<D> {
    /// Reads a whole object (a Pod, a Node, a Deployment, ...) from `de`.
    pub fn object(de: D) -> Self {
        Self { de, at: At::Object }
    }
}

/// Deserializes an object (a k8s-openapi type: a Pod, a Node, a List's item) from `de`,
/// its `metadata.managedFields` checked and left out, never built.
pub fn deserialize_lean<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
    de: D,
) -> Result<T, D::Error> {
    T::deserialize(Skipping::object(de))
}

/// What the value after a key is, for the map that read the key.
#[derive(Clone, Copy)]
enum Next {
    /// Read straight from the underlying deserializer.
    Straight,
    /// The object's `metadata`: its own map is read through [`Skipping`].
    Metadata,
    /// `metadata.managedFields`: checked, then read as absent.
    ManagedFields,
}

/// `deserialize_*` methods handed straight to the underlying deserializer, with their
/// arguments before the visitor.
macro_rules! straight {
    ($($method:ident($($arg:ident: $ty:ty),*)),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            self.de.$method($($arg,)* visitor)
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Skipping<D> {
    type Error = D::Error;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let at = self.at;
        self.de
            .deserialize_struct(name, fields, Wrap { visitor, at })
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        let at = self.at;
        self.de.deserialize_map(Wrap { visitor, at })
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        let at = self.at;
        self.de.deserialize_option(Wrap { visitor, at })
    }

    straight!(
        deserialize_any(),
        deserialize_bool(),
        deserialize_i8(),
        deserialize_i16(),
        deserialize_i32(),
        deserialize_i64(),
        deserialize_i128(),
        deserialize_u8(),
        deserialize_u16(),
        deserialize_u32(),
        deserialize_u64(),
        deserialize_u128(),
        deserialize_f32(),
        deserialize_f64(),
        deserialize_char(),
        deserialize_str(),
        deserialize_string(),
        deserialize_bytes(),
        deserialize_byte_buf(),
        deserialize_unit(),
        deserialize_seq(),
        deserialize_identifier(),
        deserialize_ignored_any(),
        deserialize_unit_struct(name: &'static str),
        deserialize_newtype_struct(name: &'static str),
        deserialize_tuple(len: usize),
        deserialize_tuple_struct(name: &'static str, len: usize),
        deserialize_enum(name: &'static str, variants: &'static [&'static str]),
    );

    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

/// The object's visitor, given its map (or its value, for `metadata`'s option) through
/// [`Skipping`]. Anything but a map, an option or null is refused, as the objects'
/// types refuse it.
struct Wrap<V> {
    visitor: V,
    at: At,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(Entries {
            map,
            at: self.at,
            next: Next::Straight,
        })
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        self.visitor.visit_some(Skipping { de, at: self.at })
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_unit()
    }
}

/// The object's (or its metadata's) map: keys are read here, then handed on, so the
/// value after each is known to be read straight, through [`Skipping`], or skipped.
struct Entries<A> {
    map: A,
    at: At,
    next: Next,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Entries<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let Some(key) = self.map.next_key_seed(KeySeed)? else {
            return Ok(None);
        };
        self.next = match (self.at, key.text()) {
            (At::Object, "metadata") => Next::Metadata,
            (At::Metadata, "managedFields") => Next::ManagedFields,
            _ => Next::Straight,
        };
        match key {
            Key::Borrowed(text) => seed.deserialize(BorrowedStrDeserializer::new(text)),
            Key::Owned(text) => seed.deserialize(StringDeserializer::new(text)),
        }
        .map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        match std::mem::replace(&mut self.next, Next::Straight) {
            Next::Straight => self.map.next_value_seed(seed),
            Next::Metadata => self.map.next_value_seed(Metadata(seed)),
            Next::ManagedFields => {
                self.map.next_value_seed(ManagedFieldsCheck)?;
                seed.deserialize(UnitDeserializer::new())
            }
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// A map key as read: borrowed from the text when it has no escapes.
enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    fn text(&self) -> &str {
        match self {
            Key::Borrowed(text) => text,
            Key::Owned(text) => text,
        }
    }
}

/// Reads a map key as a [`Key`].
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key<'de>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Key<'de>, D::Error> {
        de.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
        Ok(Key::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
        Ok(Key::Owned(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
        Ok(Key::Owned(v))
    }
}

/// The `metadata` value's seed, given its deserializer through [`Skipping`].
struct Metadata<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Metadata<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Skipping {
            de,
            at: At::Metadata,
        })
    }
}

/// Checks a `managedFields` value as k8s-openapi types it (null, or a list of entries
/// with string fields, an RFC 3339 `time` and any `fieldsV1`), building nothing. An
/// unknown or repeated key is refused too: the object then does not type here, and
/// the thorough reader says what it makes of it.
struct ManagedFieldsCheck;

impl<'de> DeserializeSeed<'de> for ManagedFieldsCheck {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for ManagedFieldsCheck {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of ManagedFieldsEntry")
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_seq(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut entries: A) -> Result<(), A::Error> {
        while entries.next_element::<Entry>()?.is_some() {}
        Ok(())
    }
}

/// A `ManagedFieldsEntry`, read for its shape only.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    #[serde(rename = "apiVersion")]
    _api_version: Option<Text>,
    #[serde(rename = "fieldsType")]
    _fields_type: Option<Text>,
    #[serde(rename = "fieldsV1")]
    _fields_v1: Option<IgnoredAny>,
    #[serde(rename = "manager")]
    _manager: Option<Text>,
    #[serde(rename = "operation")]
    _operation: Option<Text>,
    #[serde(rename = "subresource")]
    _subresource: Option<Text>,
    #[serde(rename = "time")]
    _time: Option<Time>,
}

/// A string, checked and not kept.
struct Text;

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_str(Text)
    }
}

impl Visitor<'_> for Text {
    type Value = Text;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Text, E> {
        Ok(Text)
    }
}

#[cfg(test)]
mod tests {
    use super::Skipping;
    use k8s_openapi::api::core::v1::Pod;
    use serde::de::DeserializeOwned;

    /// Types `json` through [`Skipping`] as the loader does (unknown fields noted).
    fn skipping<T: DeserializeOwned>(json: &str) -> Result<(T, bool), serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(json);
        let mut unknown = false;
        let value = serde_ignored::deserialize(Skipping::object(&mut de), |_| unknown = true)?;
        de.end()?;
        Ok((value, unknown))
    }

    const MANAGED: &str = r#"[{"apiVersion": "v1", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}, "f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {}}}},
        "manager": "kube-controller-manager", "operation": "Update", "subresource": null,
        "time": "2026-11-20T08:14:31Z"}, {"manager": "kubelet"}]"#;

    fn pod(managed_fields: &str) -> String {
        format!(
            r#"{{"apiVersion": "v1", "kind": "Pod",
              "metadata": {{"name": "p", "managedFields": {managed_fields}, "labels": {{"app": "a"}}}},
              "spec": {{"containers": [{{"name": "c", "image": "i"}}], "nodeName": "n"}},
              "status": {{"phase": "Running"}}}}"#
        )
    }

    #[test]
    fn managed_fields_are_read_as_left_out_and_the_rest_as_written() {
        let (skipped, unknown): (Pod, bool) = skipping(&pod(MANAGED)).expect("types");
        assert!(!unknown);
        let mut whole: Pod = serde_json::from_str(&pod(MANAGED)).expect("types");
        assert_eq!(
            whole.metadata.managed_fields.as_ref().map(Vec::len),
            Some(2)
        );
        whole.metadata.managed_fields = None;
        assert_eq!(skipped, whole);
        for absent in ["null", "[]"] {
            let (p, _): (Pod, bool) = skipping(&pod(absent)).expect("types");
            assert_eq!(p.metadata.managed_fields, None);
        }
    }

    #[test]
    fn a_template_s_metadata_and_escaped_keys_read_as_written() {
        let json = r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metad\u0061ta": {"name": "d",
            "managedFields": [{"manager": "m"}]},
            "spec": {"selector": {}, "template": {"metadata": {"managedFields": [{"manager": "t"}]}}}}"#;
        let (d, unknown): (k8s_openapi::api::apps::v1::Deployment, bool) =
            skipping(json).expect("types");
        assert!(!unknown);
        assert_eq!(d.metadata.name.as_deref(), Some("d"));
        assert_eq!(d.metadata.managed_fields, None);
        let template = d.spec.template.metadata;
        let kept = template.and_then(|m| m.managed_fields).expect("kept");
        assert_eq!(kept[0].manager.as_deref(), Some("t"));
    }

    #[test]
    fn what_k8s_openapi_refuses_in_managed_fields_is_refused() {
        for bad in [
            "5",
            r#""x""#,
            "{}",
            "[5]",
            "[null]",
            r#"[{"manager": 1}]"#,
            r#"[{"operation": ["Update"]}]"#,
            r#"[{"time": "yesterday"}]"#,
            r#"[{"time": 1}]"#,
            r#"[{"fieldsV1": {"f:a": }}]"#,
        ] {
            assert!(
                serde_json::from_str::<Pod>(&pod(bad)).is_err(),
                "k8s-openapi refuses {bad}"
            );
            assert!(skipping::<Pod>(&pod(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_unknown_key_in_an_entry_is_not_taken_as_read() {
        // k8s-openapi notes it as unknown (the loader then reads the object thoroughly);
        // the check refuses it, with the same outcome.
        let json = pod(r#"[{"manager": "m", "extra": 1}]"#);
        let mut noted = false;
        let _: Pod =
            serde_ignored::deserialize(&mut serde_json::Deserializer::from_str(&json), |_| {
                noted = true
            })
            .expect("types");
        assert!(noted);
        assert!(skipping::<Pod>(&json).is_err());
    }

    #[test]
    fn unknown_fields_elsewhere_are_still_noted() {
        for json in [
            r#"{"kind": "Pod", "metadata": {"nmae": "q", "managedFields": []}}"#,
            r#"{"kind": "Pod", "metadata": {"managedFields": []}, "spec": {"containers": [], "nodeNmae": "n"}}"#,
            r#"{"kind": "Pod", "metadata": {"managedFields": []}, "sepc": {}}"#,
        ] {
            let (_, unknown): (Pod, bool) = skipping(json).expect("types");
            assert!(unknown, "{json}");
        }
    }
}
