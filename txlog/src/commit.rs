//! Commit files: newline-delimited JSON actions (PROTOCOL.md "Delta Log Entries").
//!
//! Decoding accepts any whitespace between JSON objects (some writers pretty-print), ignores
//! unknown action keys and fields, and names the file and line of the first malformed
//! object. Encoding writes one compact action per line in the order given.

use crate::actions::{Action, ActionLine};
use crate::{LogError, Result};

/// Decodes the actions of a commit (or JSON checkpoint) file.
///
/// # Errors
/// [`LogError::MalformedCommit`] naming `path` and the line of the first error (truncated
/// or malformed JSON, or an action whose required fields are missing or mistyped).
pub fn decode_commit(path: &str, bytes: &[u8]) -> Result<Vec<Action>> {
    let mut out = Vec::new();
    decode_commit_into(path, bytes, &mut out)?;
    Ok(out)
}

/// Like [`decode_commit`], appending to `out`.
///
/// # Errors
/// As [`decode_commit`].
pub fn decode_commit_into(path: &str, bytes: &[u8], out: &mut Vec<Action>) -> Result<()> {
    let stream = serde_json::Deserializer::from_slice(bytes).into_iter::<ActionLine>();
    for item in stream {
        match item {
            Ok(line) => line.into_actions(out),
            Err(e) => {
                return Err(LogError::MalformedCommit {
                    path: path.to_string(),
                    line: e.line(),
                    reason: e.to_string(),
                });
            }
        }
    }
    Ok(())
}

/// Encodes actions as newline-delimited JSON, one per line.
///
/// # Errors
/// [`LogError::Invalid`] if an action cannot be serialized (a float NaN in commitInfo).
pub fn encode_commit(actions: &[Action]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(256 * actions.len());
    for a in actions {
        serde_json::to_writer(&mut out, a)
            .map_err(|e| LogError::Invalid(format!("cannot encode {} action: {e}", a.name())))?;
        out.push(b'\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::*;

    const COMMIT: &str = r#"{"commitInfo":{"timestamp":1,"operation":"WRITE","operationParameters":{"mode":"Append"},"custom":[1,2]}}
{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}
{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":[],"configuration":{"k":"v","nullval":null},"createdTime":5,"futureField":7}}
{"add":{"path":"a%20b.parquet","partitionValues":{"p":null},"size":10,"modificationTime":3,"dataChange":true,"stats":"{\"numRecords\":1}","deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":36,"cardinality":2}}}
{"remove":{"path":"old.parquet","deletionTimestamp":9,"dataChange":true}}
{"txn":{"appId":"app","version":3}}
{"domainMetadata":{"domain":"d","configuration":"{}","removed":false}}
{"unknownAction":{"x":1}}
{"cdc":{"path":"_change_data/c.parquet","partitionValues":{},"size":1,"dataChange":false}}
"#;

    #[test]
    fn decodes_every_action_and_ignores_unknowns() {
        let actions = decode_commit("0.json", COMMIT.as_bytes()).unwrap();
        let names: Vec<_> = actions.iter().map(Action::name).collect();
        assert_eq!(
            names,
            [
                "commitInfo",
                "protocol",
                "metaData",
                "add",
                "remove",
                "txn",
                "domainMetadata",
                "cdc"
            ]
        );
        let Action::Metadata(m) = &actions[2] else {
            panic!()
        };
        assert_eq!(m.configuration.get("k").map(String::as_str), Some("v"));
        assert!(!m.configuration.contains_key("nullval"));
        let Action::Add(a) = &actions[3] else {
            panic!()
        };
        assert_eq!(a.partition_values.get("p"), Some(None));
        assert_eq!(a.deletion_vector.as_ref().unwrap().cardinality, 2);
    }

    #[test]
    fn round_trips() {
        let actions = decode_commit("0.json", COMMIT.as_bytes()).unwrap();
        let encoded = encode_commit(&actions).unwrap();
        assert_eq!(decode_commit("0.json", &encoded).unwrap(), actions);
    }

    #[test]
    fn pretty_printed_commits_are_accepted() {
        let pretty = "{\n  \"txn\": {\n    \"appId\": \"a\",\n    \"version\": 1\n  }\n}\n\n{\"txn\":{\"appId\":\"b\",\"version\":2}}";
        assert_eq!(decode_commit("1.json", pretty.as_bytes()).unwrap().len(), 2);
    }

    #[test]
    fn errors_name_file_and_line() {
        let truncated = "{\"txn\":{\"appId\":\"a\",\"version\":1}}\n{\"add\":{\"path\":\"x\",";
        match decode_commit("_delta_log/00000000000000000007.json", truncated.as_bytes()) {
            Err(LogError::MalformedCommit { path, line, .. }) => {
                assert_eq!(path, "_delta_log/00000000000000000007.json");
                assert_eq!(line, 2);
            }
            other => panic!("{other:?}"),
        }
        let bad_type = r#"{"add":{"path":"x","size":"big"}}"#;
        assert!(matches!(
            decode_commit("x", bad_type.as_bytes()),
            Err(LogError::MalformedCommit { line: 1, .. })
        ));
        assert!(decode_commit("x", b"").unwrap().is_empty());
        assert!(decode_commit("x", b"\xff\xfe").is_err());
    }
}
