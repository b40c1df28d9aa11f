//! Delta log actions (PROTOCOL.md "Actions") and their newline-delimited JSON form.
//!
//! Each line of a commit file is one JSON object with a single key naming the action.
//! Unknown action keys and unknown fields are ignored, as the protocol requires for forward
//! compatibility.

mod commit_info;
mod file;
mod maps;
mod metadata;
mod protocol;
mod txn;
mod v2;

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

pub use commit_info::CommitInfo;
pub use file::{Add, AddBuilder, Cdc, Remove};
pub use maps::OptStringMap;
pub use metadata::{Format, Metadata};
pub use protocol::{Protocol, test_protocol};
pub use txn::{DomainMetadata, SetTransaction};
pub use v2::{CheckpointMetadata, Sidecar};

pub use crate::dv::DeletionVectorDescriptor;

/// Wire name of [`Add`].
pub const ADD: &str = "add";
/// Wire name of [`Remove`].
pub const REMOVE: &str = "remove";
/// Wire name of [`Metadata`].
pub const METADATA: &str = "metaData";
/// Wire name of [`Protocol`].
pub const PROTOCOL: &str = "protocol";
/// Wire name of [`SetTransaction`].
pub const TXN: &str = "txn";
/// Wire name of [`CommitInfo`].
pub const COMMIT_INFO: &str = "commitInfo";
/// Wire name of [`DomainMetadata`].
pub const DOMAIN_METADATA: &str = "domainMetadata"; // vocabulary: an action's wire name
/// Wire name of [`Cdc`].
pub const CDC: &str = "cdc";
/// Wire name of [`CheckpointMetadata`].
pub const CHECKPOINT_METADATA: &str = "checkpointMetadata";
/// Wire name of [`Sidecar`].
pub const SIDECAR: &str = "sidecar";

/// One action of the log.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `add`
    Add(Add),
    /// `remove`
    Remove(Remove),
    /// `metaData`
    Metadata(Metadata),
    /// `protocol`
    Protocol(Protocol),
    /// `txn`
    Txn(SetTransaction),
    /// `commitInfo`
    CommitInfo(CommitInfo),
    /// `domainMetadata`
    DomainMetadata(DomainMetadata),
    /// `cdc`
    Cdc(Cdc),
    /// `checkpointMetadata`
    CheckpointMetadata(CheckpointMetadata),
    /// `sidecar`
    Sidecar(Sidecar),
}

impl Action {
    /// The wire name of the action.
    pub fn name(&self) -> &'static str {
        match self {
            Action::Add(_) => ADD,
            Action::Remove(_) => REMOVE,
            Action::Metadata(_) => METADATA,
            Action::Protocol(_) => PROTOCOL,
            Action::Txn(_) => TXN,
            Action::CommitInfo(_) => COMMIT_INFO,
            Action::DomainMetadata(_) => DOMAIN_METADATA,
            Action::Cdc(_) => CDC,
            Action::CheckpointMetadata(_) => CHECKPOINT_METADATA,
            Action::Sidecar(_) => SIDECAR,
        }
    }
}

impl Serialize for Action {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1))?;
        match self {
            Action::Add(a) => m.serialize_entry(ADD, a)?,
            Action::Remove(a) => m.serialize_entry(REMOVE, a)?,
            Action::Metadata(a) => m.serialize_entry(METADATA, a)?,
            Action::Protocol(a) => m.serialize_entry(PROTOCOL, a)?,
            Action::Txn(a) => m.serialize_entry(TXN, a)?,
            Action::CommitInfo(a) => m.serialize_entry(COMMIT_INFO, a)?,
            Action::DomainMetadata(a) => m.serialize_entry(DOMAIN_METADATA, a)?,
            Action::Cdc(a) => m.serialize_entry(CDC, a)?,
            Action::CheckpointMetadata(a) => m.serialize_entry(CHECKPOINT_METADATA, a)?,
            Action::Sidecar(a) => m.serialize_entry(SIDECAR, a)?,
        }
        m.end()
    }
}

/// One line of a commit file as decoded: every known action key is optional, unknown keys
/// are ignored. A protocol-conformant line sets exactly one of them.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ActionLine {
    #[serde(default)]
    add: Option<Add>,
    #[serde(default)]
    remove: Option<Remove>,
    #[serde(default, rename = "metaData")]
    metadata: Option<Metadata>,
    #[serde(default)]
    protocol: Option<Protocol>,
    #[serde(default)]
    txn: Option<SetTransaction>,
    #[serde(default, rename = "commitInfo")]
    commit_info: Option<CommitInfo>,
    // vocabulary: an action's wire name
    #[serde(default, rename = "domainMetadata")]
    domain_metadata: Option<DomainMetadata>,
    #[serde(default)]
    cdc: Option<Cdc>,
    #[serde(default, rename = "checkpointMetadata")]
    checkpoint_metadata: Option<CheckpointMetadata>,
    #[serde(default)]
    sidecar: Option<Sidecar>,
}

impl ActionLine {
    /// The actions of the line, in a fixed order.
    pub(crate) fn into_actions(self, out: &mut Vec<Action>) {
        if let Some(a) = self.commit_info {
            out.push(Action::CommitInfo(a));
        }
        if let Some(a) = self.protocol {
            out.push(Action::Protocol(a));
        }
        if let Some(a) = self.metadata {
            out.push(Action::Metadata(a));
        }
        if let Some(a) = self.txn {
            out.push(Action::Txn(a));
        }
        if let Some(a) = self.domain_metadata {
            out.push(Action::DomainMetadata(a));
        }
        if let Some(a) = self.checkpoint_metadata {
            out.push(Action::CheckpointMetadata(a));
        }
        if let Some(a) = self.sidecar {
            out.push(Action::Sidecar(a));
        }
        if let Some(a) = self.remove {
            out.push(Action::Remove(a));
        }
        if let Some(a) = self.add {
            out.push(Action::Add(a));
        }
        if let Some(a) = self.cdc {
            out.push(Action::Cdc(a));
        }
    }
}
