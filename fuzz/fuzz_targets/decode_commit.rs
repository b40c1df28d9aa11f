//! Commit decoding on arbitrary bytes.
//!
//! Property: `decode_commit` never panics. When it succeeds, `encode_commit` succeeds (a
//! decoded commit holds nothing unencodable), decoding the encoding yields the same actions
//! (numbers compared by value, floats exactly: `common/approx_json.rs`), and when it yields
//! exactly the same actions, re-encoding them gives the same bytes.
#![no_main]

#[path = "../common/approx_json.rs"]
mod approx_json;

use alluvium_txlog::actions::Action;
use alluvium_txlog::commit::{decode_commit, decode_commit_into, encode_commit};
use libfuzzer_sys::fuzz_target;

fn as_json(actions: &[Action]) -> serde_json::Value {
    serde_json::to_value(actions).expect("actions convert to JSON values")
}

fuzz_target!(|data: &[u8]| {
    let Ok(actions) = decode_commit("fuzz.json", data) else {
        return;
    };

    // Appending to a non-empty vector keeps what was there.
    let mut appended = actions.clone();
    decode_commit_into("fuzz.json", data, &mut appended)
        .expect("second decode of the same bytes failed");
    assert_eq!(appended.len(), 2 * actions.len());

    let encoded = encode_commit(&actions).expect("decoded actions must be encodable");
    let again = decode_commit("fuzz.json", &encoded).expect("encoded commit does not decode");
    if again != actions {
        assert!(
            approx_json::close(&as_json(&again), &as_json(&actions)),
            "commit round trip changed the actions:\n{actions:?}\n{again:?}"
        );
        return;
    }
    let re_encoded = encode_commit(&again).expect("re-decoded actions must be encodable");
    assert_eq!(re_encoded, encoded, "encoding is not deterministic");
});
