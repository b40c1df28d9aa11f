//! What writers take as input: a stream of Arrow batches, infallible or fallible.
//!
//! Every writer (`append`, `overwrite`, `Transaction::write_files`, MERGE's source, the
//! state store's `put`) accepts `impl IntoIterator<Item = B>` where `B:` [`IntoBatch`]: plain
//! [`RecordBatch`]es, or `Result<RecordBatch, E>` items of a fallible source such as an
//! Arrow `RecordBatchReader`, a file reader or a network stream. The batches are consumed
//! one at a time, never collected whole (MERGE's source aside, which the join holds).
//!
//! A source's failure ends the write: the files it wrote are deleted, nothing is
//! committed, and the caller gets the source's error back. An [`Error`] passed through a
//! source (directly, or wrapped in `ArrowError::ExternalError` by an Arrow reader) comes
//! back as itself, so [`Error::kind`] still classifies it; any other error becomes
//! [`Error::Input`].

use arrow_array::RecordBatch;
use arrow_schema::ArrowError;

use crate::{Error, Result};

/// An item of a writer's input: a batch, or the outcome of reading one from a fallible
/// source.
pub trait IntoBatch {
    /// The batch, or why the source could not produce it.
    ///
    /// # Errors
    /// The source's failure (see the module documentation for how it is classified).
    fn into_batch(self) -> Result<RecordBatch>;
}

impl IntoBatch for RecordBatch {
    fn into_batch(self) -> Result<RecordBatch> {
        Ok(self)
    }
}

impl<E> IntoBatch for std::result::Result<RecordBatch, E>
where
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    fn into_batch(self) -> Result<RecordBatch> {
        self.map_err(|e| source_error(e.into()))
    }
}

/// Classifies a source's failure: an alluvium [`Error`] (bare or inside an Arrow error) is
/// returned as itself; any other error an Arrow reader carries (`ExternalError`: the
/// producer's own failure, such as a Python exception) becomes [`Error::Input`] holding it;
/// an Arrow error proper is [`Error::Arrow`]; anything else is [`Error::Input`].
pub(crate) fn source_error(e: Box<dyn std::error::Error + Send + Sync>) -> Error {
    let e = match e.downcast::<Error>() {
        Ok(own) => return *own,
        Err(e) => e,
    };
    match e.downcast::<ArrowError>() {
        Ok(arrow) => match *arrow {
            ArrowError::ExternalError(inner) => match inner.downcast::<Error>() {
                Ok(own) => *own,
                Err(other) => Error::Input(other),
            },
            other => Error::Arrow(other),
        },
        Err(other) => Error::Input(other),
    }
}

/// The batches of `source`, each converted with [`IntoBatch`]: the one iterator every
/// writer consumes.
pub(crate) fn batches<I>(source: I) -> impl Iterator<Item = Result<RecordBatch>>
where
    I: IntoIterator,
    I::Item: IntoBatch,
{
    source.into_iter().map(IntoBatch::into_batch)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::Int64Array;
    use arrow_schema::{DataType, Field, Schema};

    use super::*;
    use crate::ErrorKind;

    fn batch() -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![1]))]).unwrap()
    }

    #[test]
    fn an_alluvium_error_through_a_source_keeps_its_kind() {
        let own = Error::SchemaMismatch("x".into());
        let e = Err::<RecordBatch, _>(own).into_batch().unwrap_err();
        assert!(matches!(e, Error::SchemaMismatch(_)), "{e:?}");
        // Wrapped by an Arrow reader, as `ScanBatches` and FFI streams do.
        let wrapped = ArrowError::ExternalError(Box::new(Error::SchemaMismatch("y".into())));
        let e = Err::<RecordBatch, _>(wrapped).into_batch().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        assert!(matches!(e, Error::SchemaMismatch(_)), "{e:?}");
    }

    #[test]
    fn other_source_errors_become_input_errors() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "peer went away");
        let e = Err::<RecordBatch, _>(io).into_batch().unwrap_err();
        assert!(matches!(e, Error::Input(_)), "{e:?}");
        assert!(e.to_string().contains("peer went away"), "{e}");
        let arrow = ArrowError::ParseError("bad csv".into());
        let e = Err::<RecordBatch, _>(arrow).into_batch().unwrap_err();
        assert!(matches!(e, Error::Arrow(_)), "{e:?}");
        // A producer's own failure carried by an Arrow reader is the input's failure, and
        // keeps its type for the caller to recover.
        let carried = ArrowError::ExternalError(Box::new(std::io::Error::other("producer")));
        let e = Err::<RecordBatch, _>(carried).into_batch().unwrap_err();
        let Error::Input(inner) = e else {
            panic!("{e:?}")
        };
        assert!(inner.downcast_ref::<std::io::Error>().is_some());
        assert_eq!(batch().into_batch().unwrap().num_rows(), 1);
    }
}
