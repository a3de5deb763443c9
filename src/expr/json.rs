//! Spark's JSON path functions: get_json_object(json, path) and the json_tuple generator's
//! fields. A document is read as Jackson reads it in Spark (the first value of the text; what
//! follows is ignored), a path as Spark's JsonPathParser reads it (`$`, `.name`, `['name']`,
//! `[n]`, `[*]`), and a value that is not a string is written back as compact JSON, numbers as
//! Jackson copies them (integers as written, others as Java prints a double: `1.5`, `1.0E10`).
//! A document is kept as Jackson streams it: an object holds every field in order, a key
//! written twice twice (get_json_object reads the first that matches, json_tuple the last).

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value; an object keeps all its fields, duplicate keys included, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    #[allow(missing_docs)]
    Null,
    #[allow(missing_docs)]
    Bool(bool),
    #[allow(missing_docs)]
    Number(serde_json::Number),
    #[allow(missing_docs)]
    String(String),
    #[allow(missing_docs)]
    Array(Vec<Json>),
    #[allow(missing_docs)]
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The value of the last field named `key` of an object (where a map keeps the last).
    pub fn last_field(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(fields) => fields.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Json, D::Error> {
        struct JsonVisitor;
        impl<'de> Visitor<'de> for JsonVisitor {
            type Value = Json;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> std::result::Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E>(self, v: bool) -> std::result::Result<Json, E> {
                Ok(Json::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> std::result::Result<Json, E> {
                Ok(Json::Number(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> std::result::Result<Json, E> {
                Ok(Json::Number(v.into()))
            }
            fn visit_f64<E>(self, v: f64) -> std::result::Result<Json, E> {
                Ok(serde_json::Number::from_f64(v).map_or(Json::Null, Json::Number))
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<Json, E> {
                Ok(Json::String(v.to_string()))
            }
            fn visit_string<E>(self, v: String) -> std::result::Result<Json, E> {
                Ok(Json::String(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Json, A::Error> {
                let mut out = vec![];
                while let Some(v) = seq.next_element()? {
                    out.push(v);
                }
                Ok(Json::Array(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Json, A::Error> {
                let mut out = vec![];
                while let Some((k, v)) = map.next_entry()? {
                    out.push((k, v));
                }
                Ok(Json::Object(out))
            }
        }
        d.deserialize_any(JsonVisitor)
    }
}

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// `.name` or `['name']`: an object's field.
    Key(String),
    /// `[n]`: an array's element.
    Index(usize),
    /// `[*]`: every element of an array.
    Wildcard,
}

/// A parsed path; None where Spark's parser fails (get_json_object is then NULL).
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath(Vec<Step>);

impl JsonPath {
    /// Reads `$` followed by steps.
    pub fn parse(path: &str) -> Option<JsonPath> {
        let mut rest = path.strip_prefix('$')?;
        let mut steps = vec![];
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix('.') {
                // A name runs to the next `.` or `[`; `.*` matches nothing Spark answers.
                let end = r.find(['.', '[']).unwrap_or(r.len());
                let name = &r[..end];
                if name.is_empty() || name == "*" {
                    return None;
                }
                steps.push(Step::Key(name.to_string()));
                rest = &r[end..];
            } else if let Some(r) = rest.strip_prefix("['") {
                let end = r.find("']")?;
                steps.push(Step::Key(r[..end].to_string()));
                rest = &r[end + 2..];
            } else if let Some(r) = rest.strip_prefix("[*]") {
                steps.push(Step::Wildcard);
                rest = r;
            } else if let Some(r) = rest.strip_prefix('[') {
                let end = r.find(']')?;
                let digits = &r[..end];
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                steps.push(Step::Index(digits.parse().ok()?));
                rest = &r[end + 1..];
            } else {
                return None;
            }
        }
        Some(JsonPath(steps))
    }

    /// The path's value in `json`, as get_json_object answers it: a string unquoted, other
    /// values as JSON, NULL for a JSON null or no match. Through `[*]`, the matches are one
    /// array (a single match is that value, a string quoted).
    pub fn extract(&self, json: &str) -> Option<String> {
        let doc = first_value(json)?;
        let mut matches = vec![];
        collect(&doc, &self.0, &mut matches);
        if self.0.contains(&Step::Wildcard) {
            return match matches.as_slice() {
                [] => None,
                [one] => Some(to_json(one)),
                many => Some(to_json(&Json::Array(many.iter().map(|v| (*v).clone()).collect()))),
            };
        }
        match matches.first()? {
            Json::Null => None,
            v => Some(field_text(v)),
        }
    }
}

fn collect<'a>(v: &'a Json, steps: &[Step], out: &mut Vec<&'a Json>) {
    let Some((step, rest)) = steps.split_first() else {
        out.push(v);
        return;
    };
    match (step, v) {
        (Step::Key(k), Json::Object(fields)) => {
            // Spark's evaluatePath takes the first field of that name whose value yields
            // something (not JSON null) down the rest of the path.
            let mut tried = vec![];
            for (_, x) in fields.iter().filter(|(name, _)| name == k) {
                tried.clear();
                collect(x, rest, &mut tried);
                if tried.iter().any(|m| **m != Json::Null) {
                    break;
                }
            }
            out.append(&mut tried);
        }
        (Step::Index(i), Json::Array(a)) => {
            if let Some(x) = a.get(*i) {
                collect(x, rest, out);
            }
        }
        (Step::Wildcard, Json::Array(a)) => a.iter().for_each(|x| collect(x, rest, out)),
        _ => {}
    }
}

/// The first JSON value of `text` (Jackson stops reading after it), None if it is not JSON.
pub fn first_value(text: &str) -> Option<Json> {
    serde_json::Deserializer::from_str(text).into_iter::<Json>().next()?.ok()
}

/// A field's text as Spark returns it: a string as itself, anything else as JSON.
pub fn field_text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => to_json(other),
    }
}

/// Compact JSON as Jackson's generator writes a copied value.
fn to_json(v: &Json) -> String {
    let mut out = String::new();
    write_json(v, &mut out);
    out
}

fn write_json(v: &Json, out: &mut String) {
    let quoted = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    match v {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(n) if n.is_f64() => out.push_str(&crate::types::java_double(n.as_f64().unwrap_or(f64::NAN))),
        Json::Number(n) => out.push_str(&n.to_string()),
        // Jackson's escapes are serde_json's.
        Json::String(s) => out.push_str(&quoted(s)),
        Json::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(x, out);
            }
            out.push(']');
        }
        Json::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&quoted(k));
                out.push(':');
                write_json(x, out);
            }
            out.push('}');
        }
    }
}

/// json_tuple's fields of one document: each top-level field's text (NULL when the document
/// is not a JSON object, the field is missing or null).
pub fn tuple_fields(json: &str, names: &[Option<&str>]) -> Vec<Option<String>> {
    let doc = first_value(json);
    names
        .iter()
        .map(|n| match doc.as_ref().and_then(|d| d.last_field((*n)?)) {
            None | Some(Json::Null) => None,
            Some(v) => Some(field_text(v)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(json: &str, path: &str) -> Option<String> {
        JsonPath::parse(path)?.extract(json)
    }

    #[test]
    fn paths_read_as_spark_reads_them() {
        let doc = r#"{"a":{"b":[1, 2.50, {"c":"x"}]}, "k y":true}"#;
        assert_eq!(get(doc, "$.a.b[2].c").as_deref(), Some("x"));
        assert_eq!(get(doc, "$.a").as_deref(), Some(r#"{"b":[1,2.5,{"c":"x"}]}"#));
        assert_eq!(get(doc, "$['k y']").as_deref(), Some("true"));
        assert_eq!(get(doc, "$.a.b[7]"), None);
        assert_eq!(get(doc, "$."), None);
        assert_eq!(get(doc, "a"), None);
        assert_eq!(get("not json", "$"), None);
        assert_eq!(get(r#"{"a":1} trailing"#, "$.a").as_deref(), Some("1"));
    }

    #[test]
    fn wildcards_gather_matches_into_one_array() {
        let doc = r#"{"a":[{"b":[1,2]},{"b":[3]}], "s":["x"]}"#;
        assert_eq!(get(doc, "$.a[*].b").as_deref(), Some("[[1,2],[3]]"));
        assert_eq!(get(doc, "$.a[*].b[0]").as_deref(), Some("[1,3]"));
        assert_eq!(get(doc, "$.s[*]").as_deref(), Some("\"x\""));
        assert_eq!(get(r#"{"a":[]}"#, "$.a[*]"), None);
    }

    #[test]
    fn tuple_fields_are_top_level() {
        let f = tuple_fields(r#"{"a":1e3,"b":null,"c":[1]}"#, &[Some("a"), Some("b"), Some("c"), Some("z"), None]);
        assert_eq!(f, vec![Some("1000.0".to_string()), None, Some("[1]".to_string()), None, None]);
        assert_eq!(tuple_fields("[1]", &[Some("a")]), vec![None]);
        assert_eq!(tuple_fields(r#"{"a":1,"a":2}"#, &[Some("a")]), vec![Some("2".to_string())]);
    }

    #[test]
    fn a_duplicate_key_is_read_as_spark_reads_it() {
        // Answers from Spark 4.3: the first field that yields a value, objects copied whole.
        assert_eq!(get(r#"{"a":1,"a":2}"#, "$.a").as_deref(), Some("1"));
        assert_eq!(get(r#"{"a":{"x":1},"a":{"y":2}}"#, "$.a.y").as_deref(), Some("2"));
        assert_eq!(get(r#"{"a":{"x":1,"x":2}}"#, "$.a").as_deref(), Some(r#"{"x":1,"x":2}"#));
        assert_eq!(get(r#"{"a":null,"a":2}"#, "$.a").as_deref(), Some("2"));
        assert_eq!(get(r#"{"a":[1],"a":[2,3]}"#, "$.a[1]").as_deref(), Some("3"));
        assert_eq!(get(r#"[{"a":1,"a":2},{"a":3}]"#, "$[*].a").as_deref(), Some("[1,3]"));
        assert_eq!(get(r#"{"a":{"x":[1,2]},"a":{"x":[3]}}"#, "$.a.x[*]").as_deref(), Some("[1,2]"));
    }
}
