//! The names of the temporary files a local store writes before linking or renaming them
//! into place: `.{name}.{32 hex digits}.tmp`, hidden so that listings of table data and of
//! the log ignore them. A writer killed between the two steps leaves one behind; VACUUM
//! recognises them by this name and removes them once older than the retention.

/// The temporary name for a write of the object named `name`, unique per call.
pub(crate) fn temp_name(name: &str) -> String {
    format!(".{name}.{}.tmp", uuid::Uuid::new_v4().simple())
}

/// Whether `file_name` (one path segment) is a temporary name as the local store makes them
/// (see the module docs).
pub fn is_temp_name(file_name: &str) -> bool {
    let Some(inner) = file_name
        .strip_prefix('.')
        .and_then(|s| s.strip_suffix(".tmp"))
    else {
        return false;
    };
    match inner.rsplit_once('.') {
        Some((name, id)) => {
            !name.is_empty()
                && id.len() == 32
                && id
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_recognised_and_nothing_else() {
        for name in ["part-0.parquet", "00000000000000000001.json", "a.b"] {
            assert!(is_temp_name(&temp_name(name)), "{name}");
        }
        for name in [
            "part-0.parquet",
            ".part-0.parquet.tmp",
            ".part-0.parquet.crc",
            "..0123456789abcdef0123456789abcdef.tmp",
            ".x.0123456789ABCDEF0123456789abcdef.tmp",
            ".x.0123456789abcdef0123456789abcde.tmp",
            "x.0123456789abcdef0123456789abcdef.tmp",
        ] {
            assert!(!is_temp_name(name), "{name}");
        }
    }
}
