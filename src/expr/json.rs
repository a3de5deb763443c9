//! Spark's JSON path functions: get_json_object(json, path) and the json_tuple generator's
//! fields. A document is read as Jackson reads it in Spark (the first value of the text; what
//! follows is ignored), a path as Spark's JsonPathParser reads it (`$`, `.name`, `['name']`,
//! `[n]`, `[*]`), and a value that is not a string is written back as compact JSON, numbers as
//! Jackson copies them (integers as written, others as Java prints a double: `1.5`, `1.0E10`).

use serde_json::Value;

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
                many => Some(to_json(&Value::Array(many.iter().map(|v| (*v).clone()).collect()))),
            };
        }
        match matches.first()? {
            Value::Null => None,
            v => Some(field_text(v)),
        }
    }
}

fn collect<'a>(v: &'a Value, steps: &[Step], out: &mut Vec<&'a Value>) {
    let Some((step, rest)) = steps.split_first() else {
        out.push(v);
        return;
    };
    match (step, v) {
        (Step::Key(k), Value::Object(m)) => {
            if let Some(x) = m.get(k) {
                collect(x, rest, out);
            }
        }
        (Step::Index(i), Value::Array(a)) => {
            if let Some(x) = a.get(*i) {
                collect(x, rest, out);
            }
        }
        (Step::Wildcard, Value::Array(a)) => a.iter().for_each(|x| collect(x, rest, out)),
        _ => {}
    }
}

/// The first JSON value of `text` (Jackson stops reading after it), None if it is not JSON.
fn first_value(text: &str) -> Option<Value> {
    serde_json::Deserializer::from_str(text).into_iter::<Value>().next()?.ok()
}

/// A field's text as Spark returns it: a string as itself, anything else as JSON.
fn field_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => to_json(other),
    }
}

/// Compact JSON as Jackson's generator writes a copied value.
fn to_json(v: &Value) -> String {
    let mut out = String::new();
    write_json(v, &mut out);
    out
}

fn write_json(v: &Value, out: &mut String) {
    match v {
        Value::Number(n) if n.is_f64() => out.push_str(&crate::types::java_double(n.as_f64().unwrap_or(f64::NAN))),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(x, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_json(x, out);
            }
            out.push('}');
        }
        // Strings, integers, booleans and null as serde_json writes them (Jackson's escapes).
        other => out.push_str(&other.to_string()),
    }
}

/// json_tuple's fields of one document: each top-level field's text (NULL when the document
/// is not a JSON object, the field is missing or null).
pub fn tuple_fields(json: &str, names: &[Option<&str>]) -> Vec<Option<String>> {
    let doc = first_value(json);
    let object = doc.as_ref().and_then(Value::as_object);
    names
        .iter()
        .map(|n| match object.and_then(|m| m.get((*n)?)) {
            None | Some(Value::Null) => None,
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
    }
}
