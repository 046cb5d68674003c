//! [`Dcmi`]: the loaded library, shared. Cheap to clone, `Send + Sync`, no lifetimes on what it hands out.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use once_cell::sync::OnceCell;
use parking_lot::RwLock;

use crate::api_family::ApiFamily;
use crate::chip_table::ChipTable;
use crate::chip_type::ChipType;
use crate::deadline::DriverCalls;
use crate::error::{CallContext, Error, Result};
use crate::fault_policy::FaultPolicy;
use crate::ffi::{LoadedLibrary, Target};
use crate::ids::{CardId, ChipIds, ChipLocator, DeviceId, LogicId, PhyId};
use crate::utilization::{UtilizationCache, UtilizationMethod};

/// Settings chosen at build time.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub call_deadline: Duration,
    pub worker_concurrency: usize,
    pub host_root: Option<PathBuf>,
}

/// Facts about chips that do not change while the library is loaded, learned on first use.
#[derive(Debug, Default)]
pub(crate) struct IdCache {
    by_logic: ChipTable,
    logic_by_phy: RwLock<HashMap<PhyId, LogicId>>,
    chip_types: RwLock<HashMap<LogicId, Option<ChipType>>>,
}

pub(crate) struct Inner {
    pub library: LoadedLibrary,
    pub settings: Settings,
    pub policy: FaultPolicy,
    pub ids: IdCache,
    pub utilization: UtilizationCache,
    /// The workers of [`Dcmi::call_with_deadline`], started on its first use.
    calls: OnceCell<DriverCalls>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dcmi")
            .field("library", &self.library.path())
            .field("settings", &self.settings)
            .field("fault_policy_codes", &self.policy.len())
            .finish_non_exhaustive()
    }
}

/// A loaded DCMI library. Clone it freely: clones share the library, the id caches and the settings.
///
/// The library is unloaded when the last clone (and the last [`Chip`](crate::Chip), event stream or worker call
/// holding one) goes; [`Dcmi::shutdown`] does that explicitly and reports `dlclose` errors, `Drop` never panics.
///
/// ```no_run
/// use ascend_dcmi::Dcmi;
///
/// let dcmi = Dcmi::init()?;
/// for ids in dcmi.chips()? {
///     let chip = dcmi.chip(ids.logic)?;
///     println!("{ids}: {} at {}", chip.health()?.level, chip.temperature()?);
/// }
/// dcmi.shutdown()?;
/// # Ok::<(), ascend_dcmi::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Dcmi {
    pub(crate) inner: Arc<Inner>,
}

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Dcmi>();
};

impl Dcmi {
    pub(crate) fn from_parts(library: LoadedLibrary, settings: Settings, policy: FaultPolicy) -> Dcmi {
        Dcmi {
            inner: Arc::new(Inner {
                library,
                settings,
                policy,
                ids: IdCache::default(),
                utilization: UtilizationCache::default(),
                calls: OnceCell::new(),
            }),
        }
    }

    pub(crate) fn library(&self) -> &LoadedLibrary {
        &self.inner.library
    }

    /// The library file that was loaded (symlinks resolved when the ownership check ran).
    pub fn library_path(&self) -> &Path {
        self.inner.library.path()
    }

    /// The deadline of one call on a worker thread.
    pub fn call_deadline(&self) -> Duration {
        self.inner.settings.call_deadline
    }

    /// How many calls may run on worker threads at once.
    pub fn worker_concurrency(&self) -> usize {
        self.inner.settings.worker_concurrency
    }

    /// The host root, if one was set.
    pub fn host_root(&self) -> Option<&Path> {
        self.inner.settings.host_root.as_deref()
    }

    /// The policy grading fault codes.
    pub fn fault_policy(&self) -> &FaultPolicy {
        &self.inner.policy
    }

    /// Which utilisation call this handle settled on, once the first AI-core-type query has probed.
    pub fn utilization_method(&self) -> Option<UtilizationMethod> {
        self.inner.utilization.method()
    }

    /// The API family the driver serves, detected at initialisation (`dcmi_init`, then `dcmiv2_init`).
    pub fn api_family(&self) -> ApiFamily {
        self.inner.library.family()
    }

    /// The driver (DCMI) version string.
    ///
    /// # Errors
    /// Any DCMI error of `dcmi_get_dcmi_version`.
    #[doc(alias = "dcmi_get_dcmi_version")]
    #[doc(alias = "dcmiv2_get_dcmi_version")]
    pub fn driver_version(&self) -> Result<String> {
        self.library().dcmi_version()
    }

    /// The cards the driver lists (`dcmi_get_card_list`), in its order: what Huawei's npu-exporter counts as
    /// `machine_card_nums`. A card may hold one or two chips; cards are a V1 notion.
    ///
    /// # Errors
    /// [`Error::UnavailableOnApi`] on the V2 API (Ascend950 has no cards), or any DCMI error of `dcmi_get_card_list`.
    #[doc(alias = "dcmi_get_card_list")]
    pub fn cards(&self) -> Result<Vec<CardId>> {
        self.library().card_list()
    }

    /// Enumerates every chip with its logic and physical ids: on V1 each card of the card list and each chip on it
    /// (with its `(card, device)` locator), on V2 the device list (no locator: V2 has no cards). The result replaces
    /// the id caches: chips that are no longer listed are forgotten, changed ids are updated.
    ///
    /// # Errors
    /// Any DCMI error of `dcmi_get_card_list`, `dcmi_get_device_num_in_card`, `dcmi_get_device_logic_id` or
    /// `dcmi_get_device_phyid_from_logicid` (V1); `dcmiv2_get_device_list` or `dcmiv2_get_chip_phy_id_by_dev_id` (V2).
    #[doc(alias = "dcmi_get_card_list")]
    #[doc(alias = "dcmiv2_get_device_list")]
    pub fn chips(&self) -> Result<Vec<ChipIds>> {
        let library = self.library();
        let mut chips = Vec::new();
        match library.family() {
            ApiFamily::V1 => {
                for card in library.card_list()? {
                    for device in 0..library.device_count(card)? {
                        let locator = ChipLocator { card, device: DeviceId(device) };
                        let logic = library.logic_id(locator)?;
                        let phy = library.phy_from_logic(logic)?;
                        chips.push(ChipIds { logic, phy, locator: Some(locator) });
                    }
                }
            }
            ApiFamily::V2 => {
                for logic in library.device_list()? {
                    let phy = library.phy_from_logic(logic)?;
                    chips.push(ChipIds { logic, phy, locator: None });
                }
            }
        }
        chips.sort_by_key(|ids| ids.logic);
        self.inner.ids.by_logic.replace_all(&chips);
        let mut logic_by_phy = self.inner.ids.logic_by_phy.write();
        logic_by_phy.clear();
        logic_by_phy.extend(chips.iter().map(|ids| (ids.phy, ids.logic)));
        Ok(chips)
    }

    /// Every id of the chip with this logic id (cached after the first lookup; [`Self::chips`] refreshes the cache).
    ///
    /// # Errors
    /// [`Error::NoSuchChip`] when the driver does not know the id; other DCMI errors as they come.
    pub fn ids(&self, logic: LogicId) -> Result<ChipIds> {
        if let Some(ids) = self.inner.ids.by_logic.get(logic) {
            return Ok(ids);
        }
        let library = self.library();
        let ids = match library.family() {
            ApiFamily::V1 => {
                let locator =
                    library.locator_from_logic(logic).map_err(|e| no_such_chip(e, format!("logic id {logic}")))?;
                ChipIds { logic, phy: library.phy_from_logic(logic)?, locator: Some(locator) }
            }
            ApiFamily::V2 => {
                let phy = library.phy_from_logic(logic).map_err(|e| no_such_chip(e, format!("logic id {logic}")))?;
                ChipIds { logic, phy, locator: None }
            }
        };
        let phy = ids.phy;
        self.inner.ids.by_logic.insert(ids);
        self.inner.ids.logic_by_phy.write().insert(phy, logic);
        Ok(ids)
    }

    /// The logic id of a physical id (cached).
    ///
    /// # Errors
    /// [`Error::NoSuchChip`] when the driver does not know the id.
    #[doc(alias = "dcmi_get_device_logicid_from_phyid")]
    pub fn logic_id(&self, phy: PhyId) -> Result<LogicId> {
        if let Some(logic) = self.inner.ids.logic_by_phy.read().get(&phy) {
            return Ok(*logic);
        }
        let logic = self.library().logic_from_phy(phy).map_err(|e| no_such_chip(e, format!("physical id {phy}")))?;
        self.inner.ids.logic_by_phy.write().insert(phy, logic);
        Ok(logic)
    }

    pub(crate) fn cached_chip_type(&self, logic: LogicId) -> Option<Option<ChipType>> {
        self.inner.ids.chip_types.read().get(&logic).copied()
    }

    pub(crate) fn cache_chip_type(&self, logic: LogicId, chip_type: Option<ChipType>) {
        self.inner.ids.chip_types.write().insert(logic, chip_type);
    }

    /// Runs `call` on a worker thread and waits at most [`Self::call_deadline`] for it. A call that does not
    /// return in time keeps running (FFI calls cannot be cancelled) and keeps its place until it returns; at most
    /// [`Self::worker_concurrency`] calls are in flight at once. The workers are the crate's one deadline mechanism,
    /// [`crate::deadline::DriverCalls`], started on first use.
    ///
    /// ```no_run
    /// use ascend_dcmi::{CallContext, Dcmi, LogicId};
    ///
    /// let dcmi = Dcmi::init()?;
    /// let context = CallContext::global("dcmi_get_device_temperature");
    /// let celsius = dcmi.call_with_deadline(context, |dcmi| dcmi.chip(LogicId(0))?.temperature())?;
    /// # Ok::<(), ascend_dcmi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Timeout`] with `context` when the deadline passes; [`Error::Worker`] when all worker slots are taken
    /// or the call panicked; otherwise whatever `call` returns.
    pub fn call_with_deadline<T, F>(&self, context: CallContext, call: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Dcmi) -> Result<T> + Send + 'static,
    {
        let calls = self
            .inner
            .calls
            .get_or_init(|| DriverCalls::new("dcmi-call", self.worker_concurrency(), self.call_deadline()));
        let dcmi = self.clone();
        calls.call(context, move || call(&dcmi))
    }

    /// Unloads the library if this is the last handle, reporting what `dlclose` says. With other clones (or chips,
    /// streams, running worker calls) alive this only drops this handle, and the last one unloads. After a fault
    /// subscription the library stays loaded for the rest of the process, because the driver keeps the callback.
    ///
    /// # Errors
    /// [`Error::ShutdownFailed`] when `dlclose` fails.
    pub fn shutdown(self) -> Result<()> {
        match Arc::try_unwrap(self.inner) {
            Ok(inner) => inner.library.close(),
            Err(_shared) => Ok(()),
        }
    }

    pub(crate) fn target(&self, ids: ChipIds) -> Target {
        Target { locator: ids.locator, logic: Some(ids.logic) }
    }
}

/// Maps "the driver does not know this id" answers to [`Error::NoSuchChip`].
fn no_such_chip(error: Error, what: String) -> Error {
    match error {
        Error::InvalidDeviceId(_) | Error::DeviceNotFound(_) | Error::InvalidParameter(_) => Error::NoSuchChip(what),
        other => other,
    }
}
