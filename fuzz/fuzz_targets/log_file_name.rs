//! The `_delta_log` file-name grammar.
//!
//! Properties, on the input read as a name:
//! * `parse_log_file_name` never panics;
//! * a parsed name is canonical: `log_file_name(version, &kind)` reproduces it exactly, and
//!   parses back to the same `(version, kind)`;
//! * `classify` of a listed `_delta_log/<name>` object agrees with the parser.
//!
//! and, on the input read as a structured `(version, kind)` pair, `log_file_name` produces a
//! name that parses back to the same pair when every version in it is a Delta version
//! (at most `i64::MAX`), and a name that parses to nothing otherwise.
#![no_main]

use alluvium_storage::{ObjectMeta, StorePath};
use alluvium_txlog::log_path::{
    CheckpointFormat, CheckpointKind, LogFileKind, classify, log_file_name, parse_log_file_name,
};
use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;

fn check_name(name: &str) {
    let parsed = parse_log_file_name(name);
    if let Some((version, kind)) = &parsed {
        let generated = log_file_name(*version, kind);
        assert_eq!(generated, name, "parsed name is not canonical");
        assert_eq!(
            parse_log_file_name(&generated).as_ref(),
            Some(&(*version, kind.clone()))
        );
    }
    if let Ok(path) = StorePath::parse(format!("_delta_log/{name}")) {
        // A name with '/' lists as a deeper file whose own name is parsed instead.
        if path.file_name() == name {
            let meta = ObjectMeta {
                path,
                size: 0,
                last_modified_ms: 0,
            };
            let classified = classify(meta).map(|f| (f.version, f.kind));
            assert_eq!(
                classified, parsed,
                "classify disagrees with parse_log_file_name"
            );
        }
    }
}

fn arbitrary_kind(u: &mut Unstructured<'_>, version: u64) -> Result<Option<LogFileKind>> {
    Ok(Some(match u.int_in_range(0..=5u8)? {
        0 => LogFileKind::Commit,
        1 => LogFileKind::Crc,
        2 => LogFileKind::Checkpoint(CheckpointKind::Classic),
        3 => {
            // Part numbers are written with 10 digits, so both must stay below 10^10.
            let parts = u32::arbitrary(u)?.max(1);
            let part = u.int_in_range(1..=parts)?;
            LogFileKind::Checkpoint(CheckpointKind::MultiPart { part, parts })
        }
        4 => {
            let bytes: [u8; 16] = u.arbitrary()?;
            let mut uuid = uuid_text(&bytes);
            if bool::arbitrary(u)? {
                uuid = uuid.to_ascii_uppercase();
            }
            let format = if bool::arbitrary(u)? {
                CheckpointFormat::Json
            } else {
                CheckpointFormat::Parquet
            };
            LogFileKind::Checkpoint(CheckpointKind::Uuid { uuid, format })
        }
        _ => {
            // `end` may pass i64::MAX: such a name must not parse (checked below).
            let Some(end) = version.checked_add(1 + u64::arbitrary(u)? % 1000) else {
                return Ok(None);
            };
            LogFileKind::Compaction { end }
        }
    }))
}

fn uuid_text(b: &[u8; 16]) -> String {
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

fn check_generated(data: &[u8]) -> Result<()> {
    let mut u = Unstructured::new(data);
    let version = u64::arbitrary(&mut u)?;
    let Some(kind) = arbitrary_kind(&mut u, version)? else {
        return Ok(());
    };
    let name = log_file_name(version, &kind);
    let end = match &kind {
        LogFileKind::Compaction { end } => *end,
        _ => version,
    };
    if i64::try_from(end).is_ok() {
        assert_eq!(
            parse_log_file_name(&name),
            Some((version, kind)),
            "{name} does not parse back"
        );
    } else {
        // Delta versions are longs: a name beyond i64::MAX is not a log file.
        assert_eq!(
            parse_log_file_name(&name),
            None,
            "{name} parsed above i64::MAX"
        );
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    if let Ok(name) = std::str::from_utf8(data) {
        check_name(name);
    }
    let _ = check_generated(data);
});
