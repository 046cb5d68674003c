//! What the driver prepared, on disk: the kubelet may ask to unprepare a claim after a driver restart, when the
//! claim is gone from the API server, so the driver must remember every spec file and vNPU it made.
//!
//! The file records the boot id: after a reboot the vNPUs are gone and `/var/run/cdi` (tmpfs) is empty, so
//! entries of an earlier boot are dropped instead of being "unprepared" against things that no longer exist.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The format version written.
const VERSION: u32 = 1;

/// Where Linux tells the boot id.
pub const BOOT_ID_PATH: &str = "/proc/sys/kernel/random/boot_id";

/// How far preparing a claim got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PrepareState {
    /// Preparing began; whatever is listed exists and must be undone if the claim is unprepared.
    Started,
    /// Done; the devices are what the kubelet was told.
    Completed,
}

/// One prepared device as the kubelet was told.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointDevice {
    /// The requests it serves.
    pub request_names: Vec<String>,
    /// The pool.
    pub pool: String,
    /// The device.
    pub device: String,
    /// The CDI ids.
    pub cdi_device_ids: Vec<String>,
}

/// A vNPU the driver created for a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatedVnpu {
    /// The chip's logic id (what DCMI calls take).
    pub logic_id: u32,
    /// The vNPU id.
    pub vnpu_id: u32,
}

/// One claim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreparedClaim {
    /// Namespace of the claim.
    pub namespace: String,
    /// Name of the claim.
    pub name: String,
    /// How far it got.
    pub state: PrepareState,
    /// The devices (complete once `Completed`).
    pub devices: Vec<CheckpointDevice>,
    /// The claim's CDI spec file, once written.
    pub cdi_spec: Option<PathBuf>,
    /// vNPUs created for it.
    pub vnpus: Vec<CreatedVnpu>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CheckpointFile {
    version: u32,
    boot_id: String,
    claims: BTreeMap<String, PreparedClaim>,
}

/// The checkpoint: claims by UID, saved after every change.
#[derive(Debug)]
pub struct Checkpoint {
    path: PathBuf,
    boot_id: String,
    claims: BTreeMap<String, PreparedClaim>,
}

impl Checkpoint {
    /// Opens the checkpoint at `path` (empty when there is none). Entries from another boot are returned
    /// separately: the caller removes their leftovers (spec files on a persistent CDI directory) and forgets them.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be read, [`Error::Corrupt`] when it is not a checkpoint of this format
    /// (the driver then refuses to start rather than forget prepared claims).
    pub fn open(path: &Path, boot_id: &str) -> Result<(Self, Vec<PreparedClaim>)> {
        let mut checkpoint = Checkpoint { path: path.to_owned(), boot_id: boot_id.to_owned(), claims: BTreeMap::new() };
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok((checkpoint, Vec::new())),
            Err(source) => return Err(Error::io("reading checkpoint", path, source)),
        };
        let file: CheckpointFile = match serde_json::from_slice(&bytes) {
            Ok(file) => file,
            Err(error) => match huaweis_prepared_claims(&bytes) {
                Some(0) => {
                    tracing::info!(path = %path.display(), "the checkpoint is Huawei's DRA driver's, with no claim \
                        prepared: replacing it with this driver's");
                    checkpoint.save()?;
                    return Ok((checkpoint, Vec::new()));
                }
                Some(claims) => {
                    return Err(Error::Corrupt {
                        path: path.to_owned(),
                        reason: format!(
                            "it is the checkpoint of Huawei's DRA driver (the same driver name keeps its claims at \
                             the same path), with {claims} claim(s) prepared by it; this driver cannot unprepare \
                             them: once no pod on the node uses a claim Huawei's driver prepared, remove the file \
                             and start this driver again"
                        ),
                    })
                }
                None => {
                    return Err(Error::Corrupt { path: path.to_owned(), reason: format!("not a checkpoint: {error}") })
                }
            },
        };
        if file.version != VERSION {
            return Err(Error::Corrupt {
                path: path.to_owned(),
                reason: format!("checkpoint version {} (this driver reads {VERSION})", file.version),
            });
        }
        if file.boot_id == boot_id {
            checkpoint.claims = file.claims;
            return Ok((checkpoint, Vec::new()));
        }
        tracing::info!(previous = %file.boot_id, current = %boot_id, claims = file.claims.len(),
            "the node rebooted since the checkpoint was written; forgetting its claims");
        checkpoint.save()?;
        Ok((checkpoint, file.claims.into_values().collect()))
    }

    /// The claim with this UID.
    pub fn get(&self, uid: &str) -> Option<&PreparedClaim> {
        self.claims.get(uid)
    }

    /// Every claim, by UID.
    pub fn claims(&self) -> &BTreeMap<String, PreparedClaim> {
        &self.claims
    }

    /// Records `claim` and saves.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be written.
    pub fn put(&mut self, uid: &str, claim: PreparedClaim) -> Result<()> {
        self.claims.insert(uid.to_owned(), claim);
        self.save()
    }

    /// Forgets the claim and saves.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be written.
    pub fn remove(&mut self, uid: &str) -> Result<()> {
        if self.claims.remove(uid).is_some() {
            self.save()?;
        }
        Ok(())
    }

    fn save(&self) -> Result<()> {
        let file = CheckpointFile { version: VERSION, boot_id: self.boot_id.clone(), claims: self.claims.clone() };
        let bytes = serde_json::to_vec_pretty(&file)
            .map_err(|e| Error::Corrupt { path: self.path.clone(), reason: format!("cannot serialise: {e}") })?;
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| Error::io("creating directory", dir, source))?;
        }
        ascend_oci::write_atomically(&self.path, &bytes, 0o600)?;
        Ok(())
    }
}

/// The current boot id.
///
/// # Errors
/// [`Error::Io`] when `path` cannot be read.
pub fn boot_id(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::io("reading the boot id", path, source))?;
    Ok(text.trim().to_owned())
}

/// The number of claims prepared in a checkpoint of Huawei's DRA driver, which registers the same driver name and so
/// keeps its checkpoint at this path: a JSON object with its `checksum` and, once it prepared a claim, `v1`'s
/// `preparedClaims` by claim UID (mind-cluster `component/ascend-dynamic-resource-allocation/internal/plugin/
/// checkpoint.go`, `Checkpoint`). `None` for anything else.
fn huaweis_prepared_claims(bytes: &[u8]) -> Option<usize> {
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let object = value.as_object()?;
    if !object.contains_key("checksum") || object.contains_key("version") {
        return None;
    }
    match object.get("v1") {
        None | Some(serde_json::Value::Null) => Some(0),
        Some(v1) => match v1.get("preparedClaims") {
            None | Some(serde_json::Value::Null) => Some(0),
            Some(claims) => claims.as_object().map(serde_json::Map::len),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim() -> PreparedClaim {
        PreparedClaim {
            namespace: "default".into(),
            name: "one".into(),
            state: PrepareState::Completed,
            devices: Vec::new(),
            cdi_spec: Some("/var/run/cdi/x.json".into()),
            vnpus: vec![CreatedVnpu { logic_id: 0, vnpu_id: 100 }],
        }
    }

    #[test]
    fn claims_survive_a_restart_but_not_a_reboot() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("checkpoint.json");
        let (mut checkpoint, stale) = Checkpoint::open(&path, "boot-1").unwrap();
        assert!(stale.is_empty());
        checkpoint.put("uid-1", claim()).unwrap();

        let (checkpoint, stale) = Checkpoint::open(&path, "boot-1").unwrap();
        assert_eq!(checkpoint.get("uid-1"), Some(&claim()));
        assert!(stale.is_empty());

        let (checkpoint, stale) = Checkpoint::open(&path, "boot-2").unwrap();
        assert!(checkpoint.claims().is_empty());
        assert_eq!(stale, [claim()]);
        let (checkpoint, _) = Checkpoint::open(&path, "boot-2").unwrap();
        assert!(checkpoint.claims().is_empty(), "the reboot was recorded");
    }

    #[test]
    fn huaweis_checkpoint_is_replaced_when_it_holds_no_claim_and_refused_when_it_does() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("checkpoint.json");
        let held = r#"{"checksum": 2857, "v1": {"preparedClaims": {"uid-1": {"status": {}}}}}"#;
        std::fs::write(&path, held).unwrap();
        let error = Checkpoint::open(&path, "b").unwrap_err().to_string();
        assert!(error.contains("Huawei's DRA driver") && error.contains("1 claim(s)"), "{error}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), held, "the file is left as it was");

        for empty in
            [r#"{"checksum": 1, "v1": {}}"#, r#"{"checksum": 1}"#, r#"{"checksum": 1, "v1": {"preparedClaims": {}}}"#]
        {
            std::fs::write(&path, empty).unwrap();
            let (checkpoint, stale) = Checkpoint::open(&path, "b").unwrap();
            assert!(checkpoint.claims().is_empty() && stale.is_empty(), "{empty}");
            let (_, stale) = Checkpoint::open(&path, "b").unwrap();
            assert!(stale.is_empty(), "{empty}: the file is this driver's now");
            assert!(std::fs::read_to_string(&path).unwrap().contains("bootId"), "{empty}");
        }
    }

    #[test]
    fn a_damaged_checkpoint_stops_the_driver_with_the_file_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("checkpoint.json");
        std::fs::write(&path, "{\"version\": 1, \"bootId\": \"b\"").unwrap();
        let error = Checkpoint::open(&path, "b").unwrap_err().to_string();
        assert!(error.contains("checkpoint.json") && error.contains("not a checkpoint"), "{error}");
    }
}
