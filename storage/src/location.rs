//! Where a data file lives: inside the table root, or at an absolute URI; owned
//! ([`FileLocation`]) or borrowing the action's text ([`FileLocationRef`]).

use std::borrow::Cow;
use std::fmt;

use crate::{StorePath, StorePathRef};

/// The location of a file referenced by a table.
///
/// Most files live under the table root ([`FileLocation::Table`]). The Delta protocol also
/// allows absolute URIs (after a shallow clone or a conversion), which stores may *read* but
/// never write or delete: only [`StorePath`]s reach the mutating methods of
/// [`crate::ObjectStore`].
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum FileLocation {
    /// A file under the table root.
    Table(StorePath),
    /// An absolute URI, already percent-decoded (e.g. `file:///data/x.parquet`).
    External(String),
}

impl FileLocation {
    /// The location as text: the relative path or the absolute URI.
    pub fn as_str(&self) -> &str {
        match self {
            FileLocation::Table(p) => p.as_str(),
            FileLocation::External(u) => u,
        }
    }
}

impl fmt::Display for FileLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for FileLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

/// A [`FileLocation`] that borrows its text where it can: a plain relative path taken from
/// a log action is neither decoded nor copied. For planning over many files; reads and
/// deletes take the owned form ([`FileLocationRef::into_owned`]).
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum FileLocationRef<'a> {
    /// A file under the table root.
    Table(StorePathRef<'a>),
    /// An absolute URI, already percent-decoded.
    External(Cow<'a, str>),
}

impl FileLocationRef<'_> {
    /// The location as text: the relative path or the absolute URI.
    pub fn as_str(&self) -> &str {
        match self {
            FileLocationRef::Table(p) => p.as_str(),
            FileLocationRef::External(u) => u,
        }
    }

    /// The owned location.
    pub fn into_owned(self) -> FileLocation {
        match self {
            FileLocationRef::Table(p) => FileLocation::Table(p.into_owned()),
            FileLocationRef::External(u) => FileLocation::External(u.into_owned()),
        }
    }
}

impl fmt::Display for FileLocationRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for FileLocationRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}
