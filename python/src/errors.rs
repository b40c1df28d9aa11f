//! `alluvium::Error` (and the state store's `StateError`) as the typed exceptions of
//! `alluvium.exceptions`.
//!
//! The exception classes are defined in Python (so that they can also derive from the
//! built-in exceptions a Python programmer catches: `ValueError`, `FileNotFoundError`,
//! ...); this module picks the class from the error's flat [`ErrorKind`] and sets the
//! attributes the classes document: `kind` (the Delta conflict name, for conflicts),
//! `retryable`, `error_kind`. The message is the library's one line.

use alluvium::{Error, ErrorKind};
use alluvium_state::StateError;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyAnyMethods;

/// The Python exception for `e`.
///
/// An [`Error::Input`] whose source is a Python exception (raised by the iterable the data
/// came from, or a `KeyboardInterrupt` while it was read) is that exception again.
pub(crate) fn to_py(e: Error) -> PyErr {
    let e = match e {
        Error::Input(source) => match source.downcast::<PyErr>() {
            Ok(py) => return *py,
            Err(other) => Error::Input(other),
        },
        other => other,
    };
    Python::attach(|py| match build(py, &e) {
        Ok(err) => err,
        // The exceptions module cannot be imported (a broken installation): the message
        // still reaches the caller.
        Err(_) => PyRuntimeError::new_err(e.to_string()),
    })
}

fn class_name(e: &Error) -> &'static str {
    match e.kind() {
        ErrorKind::NotFound => match e.as_log_error() {
            Some(alluvium::LogError::TableNotFound { .. }) => "TableNotFoundError",
            _ => "NotFoundError",
        },
        ErrorKind::InvalidInput => match e {
            Error::SchemaMismatch(_) => "SchemaMismatchError",
            _ => "InvalidInputError",
        },
        kind => kind_class(kind),
    }
}

/// The exception class of an error of `kind`, when nothing more is known of it.
fn kind_class(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Conflict | ErrorKind::Contention => "CommitConflictError",
        ErrorKind::CommitOutcomeUnknown => "CommitOutcomeUnknownError",
        ErrorKind::NotFound => "NotFoundError",
        ErrorKind::AlreadyExists => "TableExistsError",
        ErrorKind::Unsupported => "UnsupportedFeatureError",
        ErrorKind::InvalidInput => "InvalidInputError",
        ErrorKind::Corrupt => "CorruptTableError",
        ErrorKind::Refused => "OperationRefusedError",
        ErrorKind::Io => "StorageError",
        ErrorKind::Interrupted => "InterruptedError",
        _ => "AlluviumError",
    }
}

fn kind_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::NotFound => "not_found",
        ErrorKind::AlreadyExists => "already_exists",
        ErrorKind::Conflict => "conflict",
        ErrorKind::Contention => "contention",
        ErrorKind::CommitOutcomeUnknown => "commit_outcome_unknown",
        ErrorKind::Unsupported => "unsupported",
        ErrorKind::Corrupt => "corrupt",
        ErrorKind::InvalidInput => "invalid_input",
        ErrorKind::Refused => "refused",
        ErrorKind::Io => "io",
        ErrorKind::Interrupted => "interrupted",
        _ => "other",
    }
}

fn build(py: Python<'_>, e: &Error) -> PyResult<PyErr> {
    let conflict = e.conflict_kind().map(|k| format!("{}Exception", k.name()));
    raise(
        py,
        class_name(e),
        &e.to_string(),
        e.kind(),
        e.is_retryable(),
        conflict,
    )
}

/// The exception of `class` with the attributes the classes document.
fn raise(
    py: Python<'_>,
    class: &str,
    message: &str,
    kind: ErrorKind,
    retryable: bool,
    conflict: Option<String>,
) -> PyResult<PyErr> {
    let module = py.import("alluvium.exceptions")?;
    let class = module.getattr(class)?;
    // One line: the library's messages are one line already; a nested cause's newline
    // must not break that.
    let message = message.replace(['\n', '\r'], " ");
    let value = class.call1((message,))?;
    value.setattr("error_kind", kind_name(kind))?;
    value.setattr("retryable", retryable)?;
    let conflict = match (conflict, kind) {
        (Some(k), _) => Some(k),
        // Out of retry budget: the contention itself is the conflict, and retrying is safe.
        (None, ErrorKind::Contention) => Some("ConcurrentTransactionException".to_string()),
        (None, _) => None,
    };
    value.setattr("kind", conflict)?;
    Ok(PyErr::from_value(value))
}

/// A result of the engine (`alluvium::Error`, or a lower error the facade wraps) into a
/// `PyResult`.
pub(crate) trait IntoPy<T> {
    /// The value, or the typed Python exception.
    fn py_err(self) -> PyResult<T>;
}

impl<T, E: Into<Error>> IntoPy<T> for Result<T, E> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(|e| to_py(e.into()))
    }
}

/// The Python exception for a state store's error: a table's error as [`to_py`] makes
/// it; the store's own by its [`kind`](StateError::kind), with its message.
pub(crate) fn state_to_py(e: StateError) -> PyErr {
    let own = match e {
        StateError::Table(e) => return to_py(e),
        own => own,
    };
    Python::attach(|py| {
        let built = raise(
            py,
            kind_class(own.kind()),
            &own.to_string(),
            own.kind(),
            false,
            None,
        );
        built.unwrap_or_else(|_| PyRuntimeError::new_err(own.to_string()))
    })
}

/// A result of the state store into a `PyResult`.
pub(crate) trait StateIntoPy<T> {
    /// The value, or the typed Python exception.
    fn py_err(self) -> PyResult<T>;
}

impl<T> StateIntoPy<T> for Result<T, StateError> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(state_to_py)
    }
}

/// An `alluvium.exceptions.InvalidInputError` with `message` (bad arguments found by this
/// module before the engine saw them).
pub(crate) fn invalid_input(message: impl Into<String>) -> PyErr {
    to_py(Error::InvalidArgument(message.into()))
}
