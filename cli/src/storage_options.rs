//! Opening tables as the command line does: object-store options come from the environment
//! variable [`STORAGE_OPTIONS_ENV`]. The library never reads it; this module is its one
//! reader.

use alluvium::{Error, Result, Table};

/// Environment variable holding options for object-store tables: comma-separated
/// `key=value` pairs, the keys of [`Table::open_with_options`] (for example
/// `single_writer=true,concurrency=16`). Local tables ignore it.
pub const STORAGE_OPTIONS_ENV: &str = "ALLUVIUM_STORAGE_OPTIONS";

/// Opens the table at `location` (a local path, a `file://` or an object-store URI), with
/// the pairs of [`STORAGE_OPTIONS_ENV`] for an object-store location. A local table takes
/// only the `fsync` item of the variable (`fsync=false` skips every fsync: faster, and not
/// crash-safe; the default is durable) and ignores the rest, which are object-store options.
///
/// # Errors
/// As [`Table::open_with_options`]; [`Error::InvalidArgument`] naming
/// [`STORAGE_OPTIONS_ENV`] when it is malformed (for a local table: when its `fsync` item is
/// not a boolean).
pub fn open(location: &str) -> Result<Table> {
    if alluvium::remote_scheme(location).is_none() {
        return open_with_fsync(location, local_durability()?);
    }
    open_with_fsync(location, true)
}

/// The durability a local table gets from the `fsync` item of [`STORAGE_OPTIONS_ENV`]
/// (durable when the variable or the item is absent). Items other than `fsync`, well formed
/// or not, belong to object stores and are not looked at.
fn local_durability() -> Result<bool> {
    let Ok(text) = std::env::var(STORAGE_OPTIONS_ENV) else {
        return Ok(true);
    };
    let mut durable = true;
    for item in text.split(',') {
        let Some((k, v)) = item.split_once('=') else {
            continue;
        };
        if !k.trim().eq_ignore_ascii_case("fsync") {
            continue;
        }
        durable = match v.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => true,
            "false" | "0" | "no" | "off" => false,
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "{STORAGE_OPTIONS_ENV}: fsync={}: expected true or false",
                    v.trim()
                )));
            }
        };
    }
    Ok(durable)
}

/// As [`open`], choosing for a local table whether writes are fsynced (`durable`; an object
/// store is durable whatever this says).
///
/// # Errors
/// As [`open`].
pub fn open_with_fsync(location: &str, durable: bool) -> Result<Table> {
    if alluvium::remote_scheme(location).is_none() {
        return Table::open_local(location, durable);
    }
    let pairs = env_pairs()?;
    let pairs: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    Table::open_with_options(location, &pairs)
}

/// The pairs of [`STORAGE_OPTIONS_ENV`] (none if unset).
pub(crate) fn env_pairs() -> Result<Vec<(String, String)>> {
    let Ok(text) = std::env::var(STORAGE_OPTIONS_ENV) else {
        return Ok(Vec::new());
    };
    parse_option_pairs(&text)
        .map_err(|bad| Error::InvalidArgument(format!("{STORAGE_OPTIONS_ENV}: {bad}")))
}

/// Parses `k=v,k=v` (blank items ignored); the error names the malformed item.
fn parse_option_pairs(text: &str) -> std::result::Result<Vec<(String, String)>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| match item.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(format!("expected key=value, got {item:?}")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn option_pairs_parse() {
        assert_eq!(
            parse_option_pairs(" single_writer=true, concurrency = 4 ,").unwrap(),
            vec![
                ("single_writer".to_string(), "true".to_string()),
                ("concurrency".to_string(), "4".to_string())
            ]
        );
        assert!(parse_option_pairs("single_writer").is_err());
        assert!(parse_option_pairs("=x").is_err());
        assert!(parse_option_pairs("").unwrap().is_empty());
    }
}
