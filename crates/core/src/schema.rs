//! Tool schemas every client's validator takes: what schemars writes is legal JSON Schema, but
//! several clients map tool schemas onto a single-`type` dialect (OpenAPI-like) and reject or
//! mangle the rest. `portable` rewrites a generated schema so that
//!
//! - an optional property (not in `required`) is simply its type: `["string", "null"]` becomes
//!   `"string"` and `anyOf: [X, {"type": "null"}]` becomes `X` (absent is how it is left out;
//!   the server still takes `null` there, as serde does for an `Option`);
//! - any other `type` array becomes `anyOf` branches with one `type` each;
//! - a bare `true` (or an object with no validation keyword) where a schema is expected becomes
//!   an explicit "any JSON value" (`anyOf` over the six types), and a bare `false` `{"not": {}}`.
//!
//! `additionalProperties` (and its kin) keep their boolean form: that is how they are written.
//!
//! Before that, each `$defs` entry that refers to no other definition is written in place of the
//! `$ref`s to it (a description beside the `$ref` wins over the definition's own): every tool's
//! schema reads in one pass, and the tool list costs fewer tokens (issue 21's context budget).
//! A definition that refers to others (recursion) keeps its `$ref`.

use serde_json::{Map, Value, json};

/// Keywords whose value is one subschema.
const ONE: [&str; 11] = [
    "items",
    "contains",
    "not",
    "propertyNames",
    "if",
    "then",
    "else",
    "additionalProperties",
    "unevaluatedProperties",
    "additionalItems",
    "unevaluatedItems",
];
/// Keywords whose value is a list of subschemas.
const LIST: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value maps names to subschemas.
const MAP: [&str; 5] = [
    "properties",
    "patternProperties",
    "dependentSchemas",
    "$defs",
    "definitions",
];
/// Where a boolean is the ordinary spelling.
const BOOLEAN_OK: [&str; 4] = [
    "additionalProperties",
    "unevaluatedProperties",
    "additionalItems",
    "unevaluatedItems",
];
/// Keywords that constrain a value; a schema with none of them accepts anything.
const CONSTRAINING: [&str; 40] = [
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "format",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "items",
    "prefixItems",
    "contains",
    "properties",
    "patternProperties",
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "dependentSchemas",
    "$ref",
    "$dynamicRef",
    "if",
];

/// Rewrites `root` (a whole tool input schema) in place; see the module comment.
pub fn portable(root: &mut Value) {
    inline_defs(root);
    visit(root, None);
}

/// Replaces `$ref`s to self-contained `$defs` entries with the entries; drops `$defs` when
/// nothing refers to it any more.
fn inline_defs(root: &mut Value) {
    let Some(Value::Object(defs)) = root.get("$defs").cloned() else {
        return;
    };
    let plain: Map<String, Value> = defs.into_iter().filter(|(_, d)| !mentions_ref(d)).collect();
    if plain.is_empty() {
        return;
    }
    if let Value::Object(m) = root {
        let mut rest = match m.remove("$defs") {
            Some(Value::Object(d)) => d,
            _ => Map::new(),
        };
        rest.retain(|name, _| !plain.contains_key(name));
        for v in m.values_mut() {
            replace_refs(v, &plain);
        }
        for v in rest.values_mut() {
            replace_refs(v, &plain);
        }
        if !rest.is_empty() {
            m.insert("$defs".into(), Value::Object(rest));
        }
    }
}

fn mentions_ref(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.contains_key("$ref") || m.values().any(mentions_ref),
        Value::Array(a) => a.iter().any(mentions_ref),
        _ => false,
    }
}

fn replace_refs(v: &mut Value, plain: &Map<String, Value>) {
    match v {
        Value::Object(m) => {
            let target = m
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
                .and_then(|name| plain.get(name));
            if let Some(Value::Object(def)) = target {
                m.remove("$ref");
                for (k, d) in def {
                    if !m.contains_key(k) {
                        m.insert(k.clone(), d.clone());
                    }
                }
            }
            m.values_mut().for_each(|c| replace_refs(c, plain));
        }
        Value::Array(a) => a.iter_mut().for_each(|c| replace_refs(c, plain)),
        _ => {}
    }
}

/// "Any JSON value", spelled with one `type` per branch.
fn any_value() -> Value {
    json!({"anyOf": [
        {"type": "string"}, {"type": "number"}, {"type": "boolean"},
        {"type": "object"}, {"type": "array"}, {"type": "null"}
    ]})
}

fn visit(node: &mut Value, keyword: Option<&str>) {
    match node {
        Value::Bool(b) if keyword.is_some_and(|k| !BOOLEAN_OK.contains(&k)) => {
            *node = if *b { any_value() } else { json!({"not": {}}) };
        }
        Value::Object(m) => {
            let required: Vec<String> = m
                .get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            if let Some(Value::Object(props)) = m.get_mut("properties") {
                for (name, p) in props.iter_mut() {
                    if !required.contains(name) {
                        optional_without_null(p);
                    }
                }
            }
            split_type_array(m);
            for (k, child) in m.iter_mut() {
                let k = k.as_str();
                if ONE.contains(&k) {
                    visit(child, Some(k));
                } else if LIST.contains(&k) {
                    if let Value::Array(a) = child {
                        a.iter_mut().for_each(|c| visit(c, Some(k)));
                    }
                } else if MAP.contains(&k)
                    && let Value::Object(entries) = child
                {
                    entries.values_mut().for_each(|c| visit(c, Some(k)));
                }
            }
            // A subschema that constrains nothing (`{}` or only a description) says so.
            if keyword.is_some_and(|k| k != "not" && !BOOLEAN_OK.contains(&k))
                && !m.keys().any(|k| CONSTRAINING.contains(&k.as_str()))
                && let Value::Object(any) = any_value()
            {
                m.extend(any);
            }
        }
        _ => {}
    }
}

/// An optional property: its `null` alternative goes (absent is how it is left out).
fn optional_without_null(p: &mut Value) {
    let Value::Object(m) = p else { return };
    if let Some(Value::Array(types)) = m.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            m.insert("type".into(), only);
        }
    }
    let is_null = |b: &Value| {
        b.as_object()
            .is_some_and(|o| o.len() == 1 && o.get("type") == Some(&json!("null")))
    };
    if !m
        .get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|b| b.iter().any(is_null))
    {
        return;
    }
    let Some(Value::Array(mut branches)) = m.remove("anyOf") else {
        return;
    };
    branches.retain(|b| !is_null(b));
    match branches.len() {
        0 => {}
        1 if branches[0]
            .as_object()
            .is_some_and(|only| only.keys().all(|k| !m.contains_key(k))) =>
        {
            if let Some(Value::Object(only)) = branches.pop() {
                m.extend(only);
            }
        }
        _ => {
            m.insert("anyOf".into(), Value::Array(branches));
        }
    }
}

/// `type: [a, b]` becomes `anyOf: [{type: a}, {type: b}]` (one type per schema).
fn split_type_array(m: &mut Map<String, Value>) {
    let Some(Value::Array(types)) = m.get("type") else {
        return;
    };
    if types.len() == 1 {
        let only = types[0].clone();
        m.insert("type".into(), only);
        return;
    }
    let branches: Vec<Value> = types.iter().map(|t| json!({ "type": t })).collect();
    m.remove("type");
    match m.remove("anyOf") {
        None => {
            m.insert("anyOf".into(), Value::Array(branches));
        }
        Some(existing) => {
            let mut all = match m.remove("allOf") {
                Some(Value::Array(a)) => a,
                _ => Vec::new(),
            };
            all.push(json!({ "anyOf": existing }));
            all.push(json!({ "anyOf": branches }));
            m.insert("allOf".into(), Value::Array(all));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done(mut v: Value) -> Value {
        portable(&mut v);
        v
    }

    #[test]
    fn optional_properties_lose_their_null_and_required_ones_keep_it_as_a_branch() {
        let v = done(json!({
            "type": "object",
            "required": ["must"],
            "properties": {
                "limit": {"type": ["integer", "null"], "minimum": 0},
                "by": {"anyOf": [{"$ref": "#/$defs/By"}, {"type": "null"}], "description": "d"},
                "must": {"type": ["string", "null"]}
            },
            "$defs": {"By": {"type": "string", "enum": ["a", "b"]}}
        }));
        assert_eq!(
            v["properties"]["limit"],
            json!({"type": "integer", "minimum": 0})
        );
        assert_eq!(
            v["properties"]["by"],
            json!({"type": "string", "enum": ["a", "b"], "description": "d"})
        );
        assert!(v.get("$defs").is_none(), "{v}");
        assert_eq!(
            v["properties"]["must"],
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]})
        );
    }

    #[test]
    fn self_contained_definitions_are_written_in_place_and_recursive_ones_stay() {
        let v = done(json!({
            "type": "object",
            "properties": {
                "target": {"$ref": "#/$defs/T", "description": "outer"},
                "tree": {"$ref": "#/$defs/Node"},
                "list": {"type": "array", "items": {"$ref": "#/$defs/T"}}
            },
            "$defs": {
                "T": {"description": "inner", "oneOf": [{"const": "a"}, {"const": "b"}]},
                "Node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}, "t": {"$ref": "#/$defs/T"}}}
            }
        }));
        assert_eq!(v["properties"]["target"]["description"], "outer");
        assert_eq!(v["properties"]["target"]["oneOf"][1]["const"], "b");
        assert_eq!(v["properties"]["list"]["items"]["description"], "inner");
        assert_eq!(v["properties"]["tree"]["$ref"], "#/$defs/Node");
        let node = &v["$defs"]["Node"];
        assert!(v["$defs"].get("T").is_none(), "{v}");
        assert_eq!(node["properties"]["t"]["oneOf"][0]["const"], "a", "{node}");
        assert_eq!(node["properties"]["kids"]["items"]["$ref"], "#/$defs/Node");
    }

    #[test]
    fn bare_and_empty_subschemas_become_explicit_and_additional_properties_stays() {
        let v = done(json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "args": {"type": "array", "items": true},
                "free": {"description": "anything"},
                "never": false
            }
        }));
        assert_eq!(v["additionalProperties"], json!(false));
        assert_eq!(v["properties"]["args"]["items"], any_value());
        assert_eq!(v["properties"]["free"]["description"], "anything");
        assert_eq!(v["properties"]["free"]["anyOf"], any_value()["anyOf"]);
        assert_eq!(v["properties"]["never"], json!({"not": {}}));
    }

    #[test]
    fn a_type_array_beside_an_any_of_keeps_both_constraints() {
        let v = done(
            json!({"properties": {"x": {"type": ["string", "integer"], "anyOf": [{"minLength": 1}, {"minimum": 1}]}}, "required": ["x"]}),
        );
        let x = &v["properties"]["x"];
        assert!(x.get("type").is_none() && x.get("anyOf").is_none(), "{x}");
        assert_eq!(x["allOf"].as_array().unwrap().len(), 2, "{x}");
    }
}
