//! Parquet checkpoint decoding on arbitrary bytes.
//!
//! Property: `read_parquet_actions` never panics. It shields callers from panics inside the
//! Parquet decoder with `catch_unwind`, so such panics are expected and tolerated here; a
//! panic that escapes the function is a bug. When decoding succeeds, the actions survive a
//! trip through the JSON commit encoding (what a JSON checkpoint of them would hold).
//!
//! libFuzzer's panic hook aborts on every panic, even one that is caught later, so the
//! target wraps it: while the decoder runs, panics are recorded instead of aborting, and the
//! recorded message is reported if the panic turns out to escape. Set
//! `ALLUVIUM_FUZZ_VERBOSE=1` to print each input's outcome and the panics the library caught.
#![no_main]

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Once, OnceLock};

use alluvium_txlog::checkpoint::read_parquet_actions;
use alluvium_txlog::commit::{decode_commit, encode_commit};
use libfuzzer_sys::fuzz_target;

thread_local! {
    static GUARDED: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn verbose() -> bool {
    static VERBOSE: OnceLock<bool> = OnceLock::new();
    *VERBOSE.get_or_init(|| std::env::var_os("ALLUVIUM_FUZZ_VERBOSE").is_some())
}

fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let show = verbose();
        let aborting = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if GUARDED.with(Cell::get) {
                let message = info.to_string();
                if show {
                    eprintln!("caught by the library: {message}");
                }
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(message));
            } else {
                aborting(info);
            }
        }));
    });
}

fuzz_target!(|data: &[u8]| {
    install_hook();
    let bytes = bytes::Bytes::copy_from_slice(data);
    GUARDED.with(|g| g.set(true));
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        read_parquet_actions("fuzz.parquet", bytes)
    }));
    GUARDED.with(|g| g.set(false));
    let result = match outcome {
        Ok(result) => result,
        Err(_) => {
            let message = LAST_PANIC
                .with(|p| p.borrow_mut().take())
                .unwrap_or_default();
            panic!("a panic escaped read_parquet_actions: {message}");
        }
    };
    if verbose() {
        match &result {
            Ok(actions) => eprintln!("decoded {} actions", actions.len()),
            Err(e) => eprintln!("error: {e}"),
        }
    }
    let Ok(actions) = result else { return };
    let encoded = encode_commit(&actions).expect("checkpoint actions must be encodable");
    let decoded =
        decode_commit("fuzz.json", &encoded).expect("encoded checkpoint actions do not decode");
    assert_eq!(
        decoded, actions,
        "checkpoint actions changed through the JSON encoding"
    );
});
