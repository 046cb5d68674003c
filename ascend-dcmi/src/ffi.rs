//! The only module with `unsafe`: small safe functions, one per DCMI call, over `dcmi-sys`'s function table.
//!
//! Every function here resolves its symbol (a missing one is [`Error::FunctionMissing`]), passes buffers that are at
//! least as large as the ABI needs (usually larger), maps the return code through [`Error::from_code`] with the call
//! and chip as context, and never trusts a count the driver returns beyond the buffer it was given. Strings are cut
//! at the first NUL (the driver's fixed buffers need not be terminated).
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use dcmi_sys as sys;
use libloading::os::unix::{Library as UnixLibrary, RTLD_GLOBAL, RTLD_LAZY};
use parking_lot::RwLock;

use crate::api_family::ApiFamily;
use crate::error::{code_meaning, CallContext, Error, Result};
use crate::health::{FaultCode, FaultCodes};
use crate::identity::{ChipInfo, Elabel};
use crate::ids::{CardId, ChipLocator, DeviceId, LogicId, PhyId};
use crate::limits::{MAX_CARDS, MAX_CHIPS, MAX_CHIPS_PER_CARD, MAX_FAULT_CODES, MAX_PROCESSES};
use crate::telemetry::{ChipProcess, ProcessList};

/// [`MAX_CHIPS_PER_CARD`] as the C calls count chips.
const CHIPS_PER_CARD: c_int = MAX_CHIPS_PER_CARD as c_int;
/// DCMI's "not supported" return code.
const NOT_SUPPORTED: c_int = -8255;
/// Slots for fault codes (`MaxErrorCodeCount`).
const ERROR_CODE_SLOTS: usize = MAX_FAULT_CODES;
/// Slots for processes: four times the documented 32, because the call takes no capacity argument.
const PROCESS_SLOTS: usize = 4 * MAX_PROCESSES;
/// Bytes for strings whose size the caller passes (product type, versions): the vendor uses 65 and 33, and
/// `dcmi_get_version` refuses less than 64.
pub(crate) const STRING_BUFFER: usize = 256;
/// Bytes for the affinity CPU list, which has no size argument at all (the vendor's 33 bytes can overflow).
const AFFINITY_BUFFER: usize = 4096;

/// The chip a call is about: its `(card, device)` (which V1 calls take) and its logic id (which V2 calls take).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target {
    /// `(card, device)`; `None` on the V2 API, which has no cards.
    pub locator: Option<ChipLocator>,
    /// The logic id.
    pub logic: Option<LogicId>,
}

impl Target {
    fn context(self, call: &'static str) -> CallContext {
        CallContext { call, chip: self.locator, logic: self.logic }
    }

    /// The `(card, device)` a V1 call takes.
    fn v1_locator(self, call: &'static str) -> Result<ChipLocator> {
        self.locator.ok_or_else(|| Error::InvalidArgument {
            context: self.context(call),
            detail: "the chip has no (card, device) pair (it was found through the V2 API)".to_owned(),
        })
    }

    /// The `dev_id` a V2 call takes: the logic id.
    fn v2_dev_id(self, call: &'static str) -> Result<c_int> {
        self.logic.and_then(|logic| c_int::try_from(logic.0).ok()).ok_or_else(|| Error::InvalidArgument {
            context: self.context(call),
            detail: "the V2 API addresses chips by logic id, and none is known".to_owned(),
        })
    }

    fn card(self) -> c_int {
        self.locator.map_or(-1, |locator| locator.card.0)
    }

    fn device(self) -> c_int {
        self.locator.map_or(-1, |locator| locator.device.0)
    }
}

/// Turns a return code into a result.
fn check(code: c_int, context: CallContext) -> Result<()> {
    if code == 0 {
        Ok(())
    } else {
        Err(Error::from_code(code, context))
    }
}

/// Resolves one function pointer of the table, or names the missing symbol.
macro_rules! function {
    ($self:ident . $name:ident) => {
        *$self.functions.$name.as_ref().map_err(|_| Error::FunctionMissing(stringify!($name)))?
    };
}

/// Calls a per-chip function of the library's API family: the V1 function with the target's `(card, device)`, or the
/// V2 function with its logic id; the other arguments are the same for both. Evaluates to `(return code, the C
/// function's name)`.
macro_rules! per_chip {
    ($self:ident, $target:expr, $v1:ident, $v2:ident ($($arg:expr),* $(,)?)) => {
        match $self.family() {
            ApiFamily::V1 => {
                let locator = $target.v1_locator(stringify!($v1))?;
                let call = function!($self.$v1);
                // SAFETY: the V1 function takes `(card, device)` and then the arguments the call site's SAFETY comment
                // justifies.
                (unsafe { call(locator.card.0, locator.device.0, $($arg),*) }, stringify!($v1))
            }
            ApiFamily::V2 => {
                let dev_id = $target.v2_dev_id(stringify!($v2))?;
                let call = function!($self.$v2);
                // SAFETY: the V2 function takes `dev_id` and then the same arguments as its V1 twin.
                (unsafe { call(dev_id, $($arg),*) }, stringify!($v2))
            }
        }
    };
}

/// Cuts a fixed C buffer at its first NUL and decodes it (invalid UTF-8 is replaced, never an error).
pub(crate) fn c_string<T: ByteLike + Copy>(buffer: &[T]) -> String {
    let bytes: Vec<u8> = buffer.iter().map(|b| b.byte()).take_while(|b| *b != 0).collect();
    String::from_utf8_lossy(&bytes).trim().to_owned()
}

/// Whether a fixed C buffer holds `text`, as [`c_string`] would decode it, without allocating. A buffer that is not
/// valid UTF-8 never matches (decoding it would replace bytes): the caller then reads afresh, which is correct, only
/// not allocation-free.
pub(crate) fn c_string_is<T: ByteLike + Copy>(buffer: &[T], text: &str) -> bool {
    const CHUNK: usize = AFFINITY_BUFFER;
    let mut bytes = [0u8; CHUNK];
    let length = buffer.iter().position(|b| b.byte() == 0).unwrap_or(buffer.len());
    if length > CHUNK {
        // Longer than any buffer this module hands out: decoded on the heap, by the same rule for invalid UTF-8
        // (found by fuzzing: comparing `c_string`'s lossy decoding matched such a buffer).
        let bytes: Vec<u8> = buffer[..length].iter().map(|b| b.byte()).collect();
        return std::str::from_utf8(&bytes).is_ok_and(|decoded| decoded.trim() == text);
    }
    for (slot, byte) in bytes.iter_mut().zip(&buffer[..length]) {
        *slot = byte.byte();
    }
    std::str::from_utf8(&bytes[..length]).is_ok_and(|decoded| decoded.trim() == text)
}

/// `chip_info` as the driver wrote it: the v2 struct, or the v1 struct on older drivers.
#[derive(Debug, Clone, Copy)]
pub(crate) enum RawChipInfo {
    /// `dcmi_get_device_chip_info_v2`.
    V2(sys::dcmi_chip_info_v2),
    /// `dcmi_get_device_chip_info`.
    V1(sys::dcmi_chip_info),
}

impl RawChipInfo {
    pub(crate) fn decode(self) -> ChipInfo {
        match self {
            RawChipInfo::V2(info) => ChipInfo {
                chip_type: c_string(&info.chip_type),
                chip_name: c_string(&info.chip_name),
                chip_version: c_string(&info.chip_ver),
                aicore_count: info.aicore_cnt,
                npu_name: Some(c_string(&info.npu_name)).filter(|name| !name.is_empty()),
            },
            RawChipInfo::V1(info) => ChipInfo {
                chip_type: c_string(&info.chip_type),
                chip_name: c_string(&info.chip_name),
                chip_version: c_string(&info.chip_ver),
                aicore_count: info.aicore_cnt,
                npu_name: None,
            },
        }
    }

    /// Whether this is what `known` says, compared in place.
    pub fn is(&self, known: &ChipInfo) -> bool {
        let (chip_type, chip_name, chip_version, aicore_count) = match self {
            RawChipInfo::V2(info) => (&info.chip_type, &info.chip_name, &info.chip_ver, info.aicore_cnt),
            RawChipInfo::V1(info) => (&info.chip_type, &info.chip_name, &info.chip_ver, info.aicore_cnt),
        };
        let npu_name_matches = match (self, known.npu_name.as_deref()) {
            (RawChipInfo::V2(info), Some(name)) => c_string_is(&info.npu_name, name),
            (RawChipInfo::V2(info), None) => c_string_is(&info.npu_name, ""),
            (RawChipInfo::V1(_), known_name) => known_name.is_none(),
        };
        aicore_count == known.aicore_count
            && npu_name_matches
            && c_string_is(chip_type, &known.chip_type)
            && c_string_is(chip_name, &known.chip_name)
            && c_string_is(chip_version, &known.chip_version)
    }
}

/// `c_char` (signed) and `c_uchar` buffers alike.
pub(crate) trait ByteLike {
    /// The raw byte.
    fn byte(self) -> u8;
}

impl ByteLike for u8 {
    fn byte(self) -> u8 {
        self
    }
}

impl ByteLike for i8 {
    fn byte(self) -> u8 {
        self.to_ne_bytes()[0]
    }
}

/// The loaded library: the function table, plus our own handle so that unloading can report its error.
///
/// The library is opened twice with the same flags; the dynamic loader counts references, so both handles name the
/// one mapping. `dcmi-sys`'s table closes its handle silently when dropped; ours is closed by [`Self::close`], which
/// reports what `dlclose` said.
pub(crate) struct LoadedLibrary {
    functions: ManuallyDrop<sys::DcmiLib>,
    handle: ManuallyDrop<UnixLibrary>,
    path: PathBuf,
    /// Set once the driver holds a pointer into this process (fault subscription): the library then must never be
    /// unloaded, because the driver's thread keeps calling the callback.
    pinned: AtomicBool,
    /// Set by [`Self::init`]: whether `dcmiv2_init` answered (V2) rather than `dcmi_init` (V1).
    is_v2: AtomicBool,
    released: bool,
}

impl std::fmt::Debug for LoadedLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedLibrary").field("path", &self.path).finish_non_exhaustive()
    }
}

impl LoadedLibrary {
    /// Opens the library at `path` with `RTLD_LAZY | RTLD_GLOBAL`, as the vendor's tools do, and resolves every
    /// symbol (missing ones only fail the calls that need them).
    pub fn open(path: &Path) -> Result<Self> {
        let load_error = |source| Error::LibraryLoad { path: path.to_path_buf(), source };
        // SAFETY: loading runs the library's initialisers. The path passed the caller's trust decision (ownership
        // check or an explicit opt-out) and names the vendor's library (or the simulator), whose initialisers have
        // no preconditions on this process.
        let handle = unsafe { UnixLibrary::open(Some(path), RTLD_LAZY | RTLD_GLOBAL) }.map_err(load_error)?;
        // SAFETY: as above; this second open only increments the loader's reference count of the same mapping.
        let second = unsafe { UnixLibrary::open(Some(path), RTLD_LAZY | RTLD_GLOBAL) }.map_err(load_error)?;
        // SAFETY: the symbols are trusted to have the signatures of the DCMI header the table was generated from;
        // that is the contract of libdcmi.so.
        let functions = unsafe { sys::DcmiLib::from_library(second) }.map_err(load_error)?;
        Ok(Self {
            functions: ManuallyDrop::new(functions),
            handle: ManuallyDrop::new(handle),
            path: path.to_path_buf(),
            pinned: AtomicBool::new(false),
            is_v2: AtomicBool::new(false),
            released: false,
        })
    }

    /// The file that was loaded.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Keeps the library mapped for the rest of the process (see the `pinned` field).
    pub fn pin(&self) {
        self.pinned.store(true, Ordering::SeqCst);
    }

    /// Unloads the library and reports `dlclose`'s error. A pinned library stays mapped and this returns `Ok`.
    pub fn close(mut self) -> Result<()> {
        self.release().map_err(Error::ShutdownFailed)
    }

    fn release(&mut self) -> std::result::Result<(), libloading::Error> {
        if self.released {
            return Ok(());
        }
        self.released = true;
        if self.pinned.load(Ordering::SeqCst) {
            return Ok(());
        }
        // SAFETY: `released` guarantees this runs once; neither field is used afterwards (close consumes self and
        // Drop is the end of its life).
        let functions = unsafe { ManuallyDrop::take(&mut self.functions) };
        drop(functions);
        // SAFETY: as above.
        let handle = unsafe { ManuallyDrop::take(&mut self.handle) };
        handle.close()
    }

    /// Initialises the library and detects its API family as the vendor's tools do: `dcmi_init` (V1), and when that
    /// fails, `dcmiv2_init` (V2, Ascend950, where `dcmi_init` fails). A driver without `dcmiv2_init`, or whose V2 init
    /// says "not supported", is a V1 driver and the V1 failure is reported; any other V2 failure is reported as such
    /// (an Ascend950 host whose V2 init failed).
    pub fn init(&self) -> Result<ApiFamily> {
        let init = function!(self.dcmi_init);
        // SAFETY: dcmi_init takes no arguments.
        let code = unsafe { init() };
        if code == 0 {
            self.is_v2.store(false, Ordering::Release);
            return Ok(ApiFamily::V1);
        }
        let v1_failure = Error::InitFailed { code, meaning: code_meaning(code) };
        let Ok(init_v2) = self.functions.dcmiv2_init.as_ref() else { return Err(v1_failure) };
        // SAFETY: dcmiv2_init takes no arguments.
        let v2_code = unsafe { init_v2() };
        match v2_code {
            0 => {
                self.is_v2.store(true, Ordering::Release);
                Ok(ApiFamily::V2)
            }
            NOT_SUPPORTED => Err(v1_failure),
            other => Err(Error::InitFailed { code: other, meaning: code_meaning(other) }),
        }
    }

    /// The API family [`Self::init`] found (V1 before it ran).
    pub fn family(&self) -> ApiFamily {
        if self.is_v2.load(Ordering::Acquire) {
            ApiFamily::V2
        } else {
            ApiFamily::V1
        }
    }

    /// Fails with [`Error::UnavailableOnApi`] unless the library serves `family`: for calls only one family has.
    fn require(&self, family: ApiFamily, call: &'static str) -> Result<()> {
        if self.family() == family {
            Ok(())
        } else {
            Err(Error::UnavailableOnApi { call, family: self.family() })
        }
    }

    /// The logic id of every chip: `dcmiv2_get_device_list` (V2 only; V1 enumerates cards).
    pub fn device_list(&self) -> Result<Vec<LogicId>> {
        self.require(ApiFamily::V2, "dcmiv2_get_device_list")?;
        let call = function!(self.dcmiv2_get_device_list);
        let mut count: c_int = 0;
        let mut list = [0 as c_int; MAX_CHIPS];
        // SAFETY: both pointers are valid for writes; list_len is the array's length.
        let code = unsafe { call(list.as_mut_ptr(), &mut count, MAX_CHIPS as c_int) };
        check(code, CallContext::global("dcmiv2_get_device_list"))?;
        Ok(decode_device_list(&list, count))
    }

    /// `dcmi_get_card_list`: card ids, negative ones skipped, at most [`MAX_CARDS`].
    pub fn card_list(&self) -> Result<Vec<CardId>> {
        self.require(ApiFamily::V1, "dcmi_get_card_list")?;
        let call = function!(self.dcmi_get_card_list);
        let mut count: c_int = 0;
        let mut cards = [0 as c_int; MAX_CARDS];
        // SAFETY: both pointers are valid for writes; list_len is the array's length.
        let code = unsafe { call(&mut count, cards.as_mut_ptr(), MAX_CARDS as c_int) };
        check(code, CallContext::global("dcmi_get_card_list"))?;
        let count = usize::try_from(count).unwrap_or(0).min(MAX_CARDS);
        Ok(cards[..count].iter().filter(|id| **id >= 0).map(|id| CardId(*id)).collect())
    }

    /// `dcmi_get_device_num_in_card`: chips on a card (0..=4).
    pub fn device_count(&self, card: CardId) -> Result<i32> {
        self.require(ApiFamily::V1, "dcmi_get_device_num_in_card")?;
        let call = function!(self.dcmi_get_device_num_in_card);
        let mut count: c_int = 0;
        // SAFETY: the out pointer is valid for writes.
        let code = unsafe { call(card.0, &mut count) };
        let context = CallContext::global("dcmi_get_device_num_in_card");
        check(code, context)?;
        if !(0..=CHIPS_PER_CARD).contains(&count) {
            return Err(Error::InvalidValue {
                context,
                detail: format!("card {card} reports {count} chips; expected 0..={CHIPS_PER_CARD}"),
            });
        }
        Ok(count)
    }

    /// `dcmi_get_device_logic_id`.
    pub fn logic_id(&self, locator: ChipLocator) -> Result<LogicId> {
        self.require(ApiFamily::V1, "dcmi_get_device_logic_id")?;
        let call = function!(self.dcmi_get_device_logic_id);
        let mut logic: c_int = -1;
        // SAFETY: the out pointer is valid for writes.
        let code = unsafe { call(&mut logic, locator.card.0, locator.device.0) };
        let context = CallContext::chip("dcmi_get_device_logic_id", locator, None);
        check(code, context)?;
        u32::try_from(logic)
            .map(LogicId)
            .map_err(|_| Error::InvalidValue { context, detail: format!("negative logic id {logic}") })
    }

    /// `dcmi_get_device_phyid_from_logicid`.
    pub fn phy_from_logic(&self, logic: LogicId) -> Result<PhyId> {
        let mut phy: c_uint = 0;
        let (code, call) = match self.family() {
            ApiFamily::V1 => {
                let call = function!(self.dcmi_get_device_phyid_from_logicid);
                // SAFETY: the out pointer is valid for writes.
                (unsafe { call(logic.0, &mut phy) }, "dcmi_get_device_phyid_from_logicid")
            }
            ApiFamily::V2 => {
                let call = function!(self.dcmiv2_get_chip_phy_id_by_dev_id);
                // SAFETY: the out pointer is valid for writes.
                (unsafe { call(logic.0, &mut phy) }, "dcmiv2_get_chip_phy_id_by_dev_id")
            }
        };
        let context = CallContext { call, chip: None, logic: Some(logic) };
        check(code, context)?;
        Ok(PhyId(phy))
    }

    /// `dcmi_get_device_logicid_from_phyid`.
    pub fn logic_from_phy(&self, phy: PhyId) -> Result<LogicId> {
        let mut logic: c_uint = 0;
        let (code, call) = match self.family() {
            ApiFamily::V1 => {
                let call = function!(self.dcmi_get_device_logicid_from_phyid);
                // SAFETY: the out pointer is valid for writes.
                (unsafe { call(phy.0, &mut logic) }, "dcmi_get_device_logicid_from_phyid")
            }
            ApiFamily::V2 => {
                let call = function!(self.dcmiv2_get_dev_id_by_chip_phy_id);
                // SAFETY: the out pointer is valid for writes.
                (unsafe { call(phy.0, &mut logic) }, "dcmiv2_get_dev_id_by_chip_phy_id")
            }
        };
        check(code, CallContext::global(call))?;
        Ok(LogicId(logic))
    }

    /// `dcmi_get_card_id_device_id_from_logicid`.
    pub fn locator_from_logic(&self, logic: LogicId) -> Result<ChipLocator> {
        self.require(ApiFamily::V1, "dcmi_get_card_id_device_id_from_logicid")?;
        let call = function!(self.dcmi_get_card_id_device_id_from_logicid);
        let (mut card, mut device): (c_int, c_int) = (-1, -1);
        // SAFETY: both out pointers are valid for writes.
        let code = unsafe { call(&mut card, &mut device, logic.0) };
        let context = CallContext { call: "dcmi_get_card_id_device_id_from_logicid", chip: None, logic: Some(logic) };
        check(code, context)?;
        if card < 0 || !(0..CHIPS_PER_CARD).contains(&device) {
            return Err(Error::InvalidValue { context, detail: format!("card {card} device {device}") });
        }
        Ok(ChipLocator { card: CardId(card), device: DeviceId(device) })
    }

    /// `dcmi_get_dcmi_version`.
    pub fn dcmi_version(&self) -> Result<String> {
        let (call, name) = match self.family() {
            ApiFamily::V1 => (function!(self.dcmi_get_dcmi_version), "dcmi_get_dcmi_version"),
            ApiFamily::V2 => (function!(self.dcmiv2_get_dcmi_version), "dcmiv2_get_dcmi_version"),
        };
        let mut buffer = [0 as c_char; STRING_BUFFER];
        // SAFETY: the buffer is valid for `STRING_BUFFER` bytes, which is the size passed.
        let code = unsafe { call(buffer.as_mut_ptr(), STRING_BUFFER as c_int) };
        check(code, CallContext::global(name))?;
        Ok(c_string(&buffer))
    }

    /// `dcmi_get_version`: the firmware version the chip runs (V1 only; the V2 API has no per-chip counterpart).
    pub fn firmware_version(&self, target: Target) -> Result<String> {
        self.require(ApiFamily::V1, "dcmi_get_version")?;
        let locator = target.v1_locator("dcmi_get_version")?;
        let call = function!(self.dcmi_get_version);
        let mut buffer = [0 as c_char; STRING_BUFFER];
        let mut length: c_int = 0;
        // SAFETY: the buffer is valid for `STRING_BUFFER` bytes, which is the size passed (above the driver's
        // minimum of 64), and the length pointer is valid for writes.
        let code = unsafe {
            call(locator.card.0, locator.device.0, buffer.as_mut_ptr(), STRING_BUFFER as c_uint, &mut length)
        };
        check(code, target.context("dcmi_get_version"))?;
        let length = usize::try_from(length).unwrap_or(0).min(STRING_BUFFER);
        let used = if length == 0 { &buffer[..] } else { &buffer[..length] };
        Ok(c_string(used).trim().to_owned())
    }

    /// `dcmi_get_device_chip_info_v2`, falling back to `dcmi_get_device_chip_info` on older drivers.
    pub fn chip_info(&self, target: Target) -> Result<ChipInfo> {
        self.raw_chip_info(target).map(RawChipInfo::decode)
    }

    /// [`Self::chip_info`] as the driver wrote it, for comparisons that must not allocate.
    pub fn raw_chip_info(&self, target: Target) -> Result<RawChipInfo> {
        match self.chip_info_v2(target) {
            Err(error) if error.is_unsupported() => self.chip_info_v1(target).map(RawChipInfo::V1),
            other => other.map(RawChipInfo::V2),
        }
    }

    fn chip_info_v2(&self, target: Target) -> Result<sys::dcmi_chip_info_v2> {
        let mut info = sys::dcmi_chip_info_v2::default();
        // SAFETY: the struct matches the ABI layout (checked by dcmi-sys's layout assertions) and is writable.
        let (code, call) =
            per_chip!(self, target, dcmi_get_device_chip_info_v2, dcmiv2_get_device_chip_info(&mut info));
        check(code, target.context(call))?;
        Ok(info)
    }

    fn chip_info_v1(&self, target: Target) -> Result<sys::dcmi_chip_info> {
        self.require(ApiFamily::V1, "dcmi_get_device_chip_info")?;
        let call = function!(self.dcmi_get_device_chip_info);
        let mut info = sys::dcmi_chip_info::default();
        // SAFETY: the struct matches the ABI layout and is writable.
        let code = unsafe { call(target.card(), target.device(), &mut info) };
        check(code, target.context("dcmi_get_device_chip_info"))?;
        Ok(info)
    }

    /// `dcmi_get_device_board_info`.
    pub fn board_info(&self, target: Target) -> Result<sys::dcmi_board_info> {
        let mut info = sys::dcmi_board_info::default();
        // SAFETY: the struct matches the ABI layout and is writable.
        let (code, call) = per_chip!(self, target, dcmi_get_device_board_info, dcmiv2_get_device_board_info(&mut info));
        check(code, target.context(call))?;
        Ok(info)
    }

    /// `dcmi_get_mainboard_id`.
    pub fn mainboard_id(&self, target: Target) -> Result<u32> {
        let mut id: c_uint = 0;
        // SAFETY: the out pointer is valid for writes.
        let (code, call) = per_chip!(self, target, dcmi_get_mainboard_id, dcmiv2_get_mainboard_id(&mut id));
        check(code, target.context(call))?;
        Ok(id)
    }

    /// `dcmi_get_product_type`.
    pub fn product_type(&self, target: Target) -> Result<String> {
        self.raw_product_type(target).map(|buffer| c_string(&buffer))
    }

    /// [`Self::product_type`] as the driver wrote it.
    pub fn raw_product_type(&self, target: Target) -> Result<[c_char; STRING_BUFFER]> {
        self.require(ApiFamily::V1, "dcmi_get_product_type")?;
        let call = function!(self.dcmi_get_product_type);
        let mut buffer = [0 as c_char; STRING_BUFFER];
        // SAFETY: the buffer is valid for `STRING_BUFFER` bytes, which is the size passed.
        let code = unsafe { call(target.card(), target.device(), buffer.as_mut_ptr(), STRING_BUFFER as c_int) };
        check(code, target.context("dcmi_get_product_type"))?;
        Ok(buffer)
    }

    /// `dcmi_get_device_pcie_info_v2`.
    pub fn pcie_info(&self, target: Target) -> Result<sys::dcmi_pcie_info_all> {
        let mut info = sys::dcmi_pcie_info_all::default();
        // SAFETY: the struct matches the ABI layout and is writable.
        let (code, call) =
            per_chip!(self, target, dcmi_get_device_pcie_info_v2, dcmiv2_get_device_pcie_info(&mut info));
        check(code, target.context(call))?;
        Ok(info)
    }

    /// `dcmi_get_affinity_cpu_info_by_device_id`: the affine CPU list.
    pub fn affinity_cpus(&self, target: Target) -> Result<String> {
        self.with_affinity_cpus(target, c_string)
    }

    /// Hands the affine CPU list, as the driver wrote it (the used part of the buffer), to `read`: the buffer lives
    /// on the stack, so a comparison allocates nothing.
    pub fn with_affinity_cpus<R>(&self, target: Target, read: impl FnOnce(&[c_char]) -> R) -> Result<R> {
        let mut buffer = [0 as c_char; AFFINITY_BUFFER];
        let mut length: c_int = 0;
        // SAFETY: the call takes no buffer size; the buffer is far larger than any CPU list the driver writes (the
        // vendor's own is 33 bytes), and the length pointer is valid for writes.
        let (code, call) = per_chip!(
            self,
            target,
            dcmi_get_affinity_cpu_info_by_device_id,
            dcmiv2_get_affinity_cpu_info_by_dev_id(buffer.as_mut_ptr(), &mut length)
        );
        check(code, target.context(call))?;
        let length = usize::try_from(length).unwrap_or(0).min(AFFINITY_BUFFER);
        let used = if length == 0 { &buffer[..] } else { &buffer[..length] };
        Ok(read(used))
    }

    /// `dcmi_get_device_die_v2` (VDIE: the chip's UUID).
    pub fn die_id(&self, target: Target) -> Result<[u32; 5]> {
        let mut die = sys::dcmi_die_id::default();
        // SAFETY: the struct matches the ABI layout and is writable.
        let (code, call) = per_chip!(
            self,
            target,
            dcmi_get_device_die_v2,
            dcmiv2_get_device_die_id(sys::dcmi_die_type::VDIE, &mut die)
        );
        check(code, target.context(call))?;
        Ok(die.soc_die)
    }

    /// `dcmi_get_card_elabel_v2`.
    pub fn elabel(&self, target: Target) -> Result<Elabel> {
        self.raw_elabel(target).map(|label| decode_elabel(&label))
    }

    /// [`Self::elabel`] as the driver wrote it.
    /// V1 labels the card (`dcmi_get_card_elabel_v2`), V2 the chip (`dcmiv2_get_device_elabel_info`).
    pub fn raw_elabel(&self, target: Target) -> Result<sys::dcmi_elabel_info> {
        let mut label = sys::dcmi_elabel_info::default();
        let (code, call) = match self.family() {
            ApiFamily::V1 => {
                let card = target.v1_locator("dcmi_get_card_elabel_v2")?.card;
                let call = function!(self.dcmi_get_card_elabel_v2);
                // SAFETY: the struct matches the ABI layout and is writable.
                (unsafe { call(card.0, &mut label) }, "dcmi_get_card_elabel_v2")
            }
            ApiFamily::V2 => {
                let dev_id = target.v2_dev_id("dcmiv2_get_device_elabel_info")?;
                let call = function!(self.dcmiv2_get_device_elabel_info);
                // SAFETY: the struct matches the ABI layout and is writable.
                (unsafe { call(dev_id, &mut label) }, "dcmiv2_get_device_elabel_info")
            }
        };
        check(code, target.context(call))?;
        Ok(label)
    }

    /// `dcmiv2_get_port_pkt_stats_info`: the packet counters of one unified-bus port (V2 only).
    pub fn port_stats(&self, target: Target, die: i32, port: i32) -> Result<sys::dcmi_port_pkt_stats_info> {
        self.require(ApiFamily::V2, "dcmiv2_get_port_pkt_stats_info")?;
        let dev_id = target.v2_dev_id("dcmiv2_get_port_pkt_stats_info")?;
        let call = function!(self.dcmiv2_get_port_pkt_stats_info);
        let mut which = sys::dcmi_ub_port_info { udie_id: die, port_id: port };
        let mut stats = sys::dcmi_port_pkt_stats_info::default();
        // SAFETY: both structs match the ABI layout; the port is readable and the statistics writable.
        let code = unsafe { call(dev_id, &mut which, &mut stats) };
        check(code, target.context("dcmiv2_get_port_pkt_stats_info"))?;
        Ok(stats)
    }

    /// `dcmi_get_device_health`.
    pub fn health(&self, target: Target) -> Result<u32> {
        let mut health: c_uint = 0;
        // SAFETY: the out pointer is valid for writes.
        let (code, call) = per_chip!(self, target, dcmi_get_device_health, dcmiv2_get_device_health(&mut health));
        check(code, target.context(call))?;
        Ok(health)
    }

    /// `dcmi_get_device_errorcode_v2`: the raised fault codes, zeros skipped, without heap allocation (the polling
    /// hot path reads it every few seconds per chip).
    pub fn error_codes(&self, target: Target) -> Result<FaultCodes> {
        let mut count: c_int = 0;
        let mut codes = [0 as c_uint; ERROR_CODE_SLOTS];
        // SAFETY: the list is valid for `ERROR_CODE_SLOTS` entries, which is the length passed.
        let (code, call) = per_chip!(
            self,
            target,
            dcmi_get_device_errorcode_v2,
            dcmiv2_get_device_error_code_list(&mut count, codes.as_mut_ptr(), ERROR_CODE_SLOTS as c_uint)
        );
        check(code, target.context(call))?;
        Ok(decode_fault_codes(&codes, count))
    }

    /// `dcmi_get_device_temperature` in °C.
    pub fn temperature(&self, target: Target) -> Result<i32> {
        let mut value: c_int = 0;
        // SAFETY: the out pointer is valid for writes.
        let (code, call) =
            per_chip!(self, target, dcmi_get_device_temperature, dcmiv2_get_device_temperature(&mut value));
        check(code, target.context(call))?;
        Ok(value)
    }

    /// `dcmi_get_device_power_info` in 0.1 W.
    pub fn power(&self, target: Target) -> Result<i32> {
        let mut value: c_int = 0;
        // SAFETY: the out pointer is valid for writes.
        let (code, call) =
            per_chip!(self, target, dcmi_get_device_power_info, dcmiv2_get_device_power_info(&mut value));
        check(code, target.context(call))?;
        Ok(value)
    }

    /// `dcmi_mcu_get_power_info`: the card's power in 0.1 W.
    pub fn card_power(&self, target: Target) -> Result<i32> {
        self.require(ApiFamily::V1, "dcmi_mcu_get_power_info")?;
        let call = function!(self.dcmi_mcu_get_power_info);
        let mut value: c_int = 0;
        // SAFETY: the out pointer is valid for writes.
        let code = unsafe { call(target.card(), &mut value) };
        check(code, target.context("dcmi_mcu_get_power_info"))?;
        Ok(value)
    }

    /// `dcmi_get_device_voltage` in 0.01 V.
    pub fn voltage(&self, target: Target) -> Result<u32> {
        let mut value: c_uint = 0;
        // SAFETY: the out pointer is valid for writes.
        let (code, call) = per_chip!(self, target, dcmi_get_device_voltage, dcmiv2_get_device_voltage(&mut value));
        check(code, target.context(call))?;
        Ok(value)
    }

    /// `dcmi_get_device_frequency` in MHz.
    pub fn frequency(&self, target: Target, kind: i32) -> Result<u32> {
        let mut value: c_uint = 0;
        let kind = sys::dcmi_freq_type(kind.unsigned_abs());
        // SAFETY: the out pointer is valid for writes; the enum is passed by value as a C int.
        let (code, call) =
            per_chip!(self, target, dcmi_get_device_frequency, dcmiv2_get_device_frequency(kind, &mut value));
        check(code, target.context(call))?;
        Ok(value)
    }

    /// `dcmi_get_device_utilization_rate` for one input type.
    pub fn utilization(&self, target: Target, kind: i32) -> Result<u32> {
        let mut value: c_uint = 0;
        // SAFETY: the out pointer is valid for writes.
        let (code, call) = per_chip!(
            self,
            target,
            dcmi_get_device_utilization_rate,
            dcmiv2_get_device_utilization_rate(kind, &mut value)
        );
        check(code, target.context(call))?;
        Ok(value)
    }

    /// `dcmi_get_device_multi_utilization_rate_period`.
    pub fn multi_utilization_period(&self, target: Target, period: i32) -> Result<sys::dcmi_multi_utilization_info> {
        let mut info = sys::dcmi_multi_utilization_info::default();
        // SAFETY: the struct matches the ABI layout and is writable.
        let (code, call) = per_chip!(
            self,
            target,
            dcmi_get_device_multi_utilization_rate_period,
            dcmiv2_get_device_multi_utilization_rate_period(&mut info, period)
        );
        check(code, target.context(call))?;
        Ok(info)
    }

    /// `dcmi_get_device_multi_utilization_rate`.
    pub fn multi_utilization(&self, target: Target) -> Result<sys::dcmi_multi_utilization_info> {
        let mut info = sys::dcmi_multi_utilization_info::default();
        // SAFETY: the struct matches the ABI layout and is writable.
        let (code, call) = per_chip!(
            self,
            target,
            dcmi_get_device_multi_utilization_rate,
            dcmiv2_get_device_multi_utilization_rate(&mut info)
        );
        check(code, target.context(call))?;
        Ok(info)
    }

    /// `dcmi_get_device_hbm_info`.
    pub fn hbm_info(&self, target: Target) -> Result<sys::dcmi_hbm_info> {
        let mut info = sys::dcmi_hbm_info::default();
        // SAFETY: the struct matches the ABI layout and is writable.
        let (code, call) = per_chip!(self, target, dcmi_get_device_hbm_info, dcmiv2_get_device_hbm_info(&mut info));
        check(code, target.context(call))?;
        Ok(info)
    }

    /// `dcmi_get_device_memory_info_v3`.
    pub fn memory_info(&self, target: Target) -> Result<sys::dcmi_get_memory_info_stru> {
        self.require(ApiFamily::V1, "dcmi_get_device_memory_info_v3")?;
        let call = function!(self.dcmi_get_device_memory_info_v3);
        let mut info = sys::dcmi_get_memory_info_stru::default();
        // SAFETY: the struct has the real LP64 layout (112 bytes, not the header comment's 96) and is writable.
        let code = unsafe { call(target.card(), target.device(), &mut info) };
        check(code, target.context("dcmi_get_device_memory_info_v3"))?;
        Ok(info)
    }

    /// `dcmi_get_device_ecc_info`.
    pub fn ecc_info(&self, target: Target, component: i32) -> Result<sys::dcmi_ecc_info> {
        let mut info = sys::dcmi_ecc_info::default();
        let component = sys::dcmi_device_type(component.unsigned_abs());
        // SAFETY: the struct matches the ABI layout and is writable.
        let (code, call) =
            per_chip!(self, target, dcmi_get_device_ecc_info, dcmiv2_get_device_ecc_info(component, &mut info));
        check(code, target.context(call))?;
        Ok(info)
    }

    /// `dcmi_get_device_resource_info`: the processes and their device memory (at most [`MAX_PROCESSES`] kept),
    /// without heap allocation.
    pub fn processes(&self, target: Target) -> Result<ProcessList> {
        let mut entries = [sys::dcmi_proc_mem_info::default(); PROCESS_SLOTS];
        let mut count: c_int = 0;
        // SAFETY: the call takes no capacity; the array has four times the documented maximum of 32 entries, and the
        // count pointer is valid for writes.
        let (code, call) = per_chip!(
            self,
            target,
            dcmi_get_device_resource_info,
            dcmiv2_get_device_proc_mem_info(entries.as_mut_ptr(), &mut count)
        );
        check(code, target.context(call))?;
        let count = usize::try_from(count).unwrap_or(0).min(MAX_PROCESSES);
        let mut processes = [ChipProcess::default(); MAX_PROCESSES];
        for (process, entry) in processes.iter_mut().zip(&entries[..count]) {
            *process = ChipProcess { pid: entry.proc_id, memory_bytes: entry.proc_mem_usage };
        }
        Ok(ProcessList::from_slice(&processes[..count]))
    }

    /// `dcmi_get_pcie_link_bandwidth_info` over `profiling_ms`.
    pub fn pcie_bandwidth(&self, target: Target, profiling_ms: i32) -> Result<sys::dcmi_pcie_link_bandwidth_info> {
        let mut info = sys::dcmi_pcie_link_bandwidth_info { profiling_time: profiling_ms, ..Default::default() };
        // SAFETY: the struct matches the ABI layout and is writable; profiling_time is its input field.
        let (code, call) =
            per_chip!(self, target, dcmi_get_pcie_link_bandwidth_info, dcmiv2_get_pcie_link_bandwidth_info(&mut info));
        check(code, target.context(call))?;
        Ok(info)
    }

    /// `dcmi_get_hccs_link_bandwidth_info` over `profiling_ms`.
    pub fn hccs_bandwidth(&self, target: Target, profiling_ms: i32) -> Result<sys::dcmi_hccs_bandwidth_info> {
        self.require(ApiFamily::V1, "dcmi_get_hccs_link_bandwidth_info")?;
        let call = function!(self.dcmi_get_hccs_link_bandwidth_info);
        let mut info = sys::dcmi_hccs_bandwidth_info { profiling_time: profiling_ms, ..Default::default() };
        // SAFETY: the struct matches the ABI layout and is writable; profiling_time is its input field.
        let code = unsafe { call(target.card(), target.device(), &mut info) };
        check(code, target.context("dcmi_get_hccs_link_bandwidth_info"))?;
        Ok(info)
    }

    /// `dcmi_get_device_network_health`.
    pub fn network_health(&self, target: Target) -> Result<u32> {
        let mut result = sys::dcmi_rdfx_detect_result(0);
        // SAFETY: the out pointer is valid for writes; the enum is a transparent c_uint, so any value is valid.
        let (code, call) =
            per_chip!(self, target, dcmi_get_device_network_health, dcmiv2_get_device_network_health(&mut result));
        check(code, target.context(call))?;
        Ok(result.0)
    }

    /// `dcmi_get_device_info(main_cmd, sub_cmd)` into a `T` prepared by the caller (some queries read input fields).
    pub fn device_info<T: Copy + DeviceInfoBuffer>(
        &self,
        target: Target,
        main_cmd: u32,
        sub_cmd: u32,
        mut buffer: T,
    ) -> Result<T> {
        // vNPU queries exist on V1 only; the link counters on both families.
        if !T::ON_V2 {
            self.require(ApiFamily::V1, "dcmi_get_device_info")?;
        }
        let capacity = std::mem::size_of::<T>();
        let mut size = c_uint::try_from(capacity).unwrap_or(c_uint::MAX);
        let pointer = (&mut buffer as *mut T).cast::<c_void>();
        // SAFETY: `T` is one of the plain ABI structs named by `DeviceInfoBuffer`, valid for `size` bytes of writes;
        // the driver writes at most `size` bytes.
        let (code, call) = per_chip!(
            self,
            target,
            dcmi_get_device_info,
            dcmiv2_get_device_info(sys::dcmi_main_cmd(main_cmd), sub_cmd, pointer, &mut size)
        );
        check(code, target.context(call))?;
        Ok(buffer)
    }

    /// `dcmi_get_device_ip` of RoCE port 0, asking for `ip_type` (V1 only: the V2 API has no such call). The
    /// address bytes as the driver wrote them (the first 4 for IPv4) and the type it reports.
    pub fn device_ip(&self, target: Target, ip_type: sys::dcmi_ip_addr_type) -> Result<([u8; 16], u32)> {
        self.require(ApiFamily::V1, "dcmi_get_device_ip")?;
        let call = function!(self.dcmi_get_device_ip);
        let mut ip = sys::dcmi_ip_addr { ip_type, ..Default::default() };
        let mut mask = sys::dcmi_ip_addr { ip_type, ..Default::default() };
        // SAFETY: both out pointers are valid for writes of a whole `dcmi_ip_addr`.
        let code =
            unsafe { call(target.card(), target.device(), sys::dcmi_port_type::DCMI_ROCE_PORT, 0, &mut ip, &mut mask) };
        check(code, target.context("dcmi_get_device_ip"))?;
        // SAFETY: both members of the union are byte arrays, so any bytes are a valid `ip6`.
        Ok((unsafe { ip.u_addr.ip6 }, ip.ip_type.0))
    }

    /// `dcmi_create_vdevice` from a template, letting the driver choose the ids.
    pub fn create_vdevice(&self, target: Target, template: &str) -> Result<sys::dcmi_create_vdev_out> {
        self.require(ApiFamily::V1, "dcmi_create_vdevice")?;
        let call = function!(self.dcmi_create_vdevice);
        let mut request = sys::dcmi_create_vdev_res_stru { vdev_id: u32::MAX, vfg_id: u32::MAX, ..Default::default() };
        let capacity = request.template_name.len() - 1;
        for (slot, byte) in request.template_name.iter_mut().zip(template.bytes().take(capacity)) {
            *slot = c_char::from_ne_bytes([byte]);
        }
        let mut out = sys::dcmi_create_vdev_out::default();
        // SAFETY: both structs match the ABI layout; the template name is NUL-terminated within its 32 bytes.
        let code = unsafe { call(target.card(), target.device(), &mut request, &mut out) };
        check(code, target.context("dcmi_create_vdevice"))?;
        Ok(out)
    }

    /// `dcmi_set_destroy_vdevice`.
    pub fn destroy_vdevice(&self, target: Target, vdev_id: u32) -> Result<()> {
        self.require(ApiFamily::V1, "dcmi_set_destroy_vdevice")?;
        let call = function!(self.dcmi_set_destroy_vdevice);
        // SAFETY: plain integer arguments.
        let code = unsafe { call(target.card(), target.device(), vdev_id) };
        check(code, target.context("dcmi_set_destroy_vdevice"))
    }

    /// `dcmi_set_device_reset` on a channel (1 in-band, 0 out-of-band).
    pub fn reset(&self, target: Target, in_band: bool) -> Result<()> {
        let channel =
            if in_band { sys::dcmi_reset_channel::INBAND_CHANNEL } else { sys::dcmi_reset_channel::OUTBAND_CHANNEL };
        // SAFETY: plain arguments.
        let (code, call) = per_chip!(self, target, dcmi_set_device_reset, dcmiv2_reset_device(channel));
        check(code, target.context(call))
    }

    /// `dcmi_get_device_outband_channel_state`: whether out-of-band reset is possible.
    pub fn outband_channel_ready(&self, target: Target) -> Result<bool> {
        let mut state: c_int = 0;
        // SAFETY: the out pointer is valid for writes.
        let (code, call) = per_chip!(
            self,
            target,
            dcmi_get_device_outband_channel_state,
            dcmiv2_get_device_outband_channel_state(&mut state)
        );
        check(code, target.context(call))?;
        Ok(state == 1)
    }

    /// `dcmi_pre_reset_soc`.
    pub fn pre_reset(&self, target: Target) -> Result<()> {
        // SAFETY: plain arguments.
        let (code, call) = per_chip!(self, target, dcmi_pre_reset_soc, dcmiv2_pre_reset_device());
        check(code, target.context(call))
    }

    /// `dcmi_rescan_soc`.
    pub fn rescan(&self, target: Target) -> Result<()> {
        // SAFETY: plain arguments.
        let (code, call) = per_chip!(self, target, dcmi_rescan_soc, dcmiv2_rescan_device());
        check(code, target.context(call))
    }

    /// `dcmi_get_device_boot_status`, raw (3 and 16 both mean finished).
    pub fn boot_status(&self, target: Target) -> Result<u32> {
        let mut status = sys::dcmi_boot_status(0);
        // SAFETY: the enum is a transparent c_uint, so the driver's 16 is a valid value.
        let (code, call) =
            per_chip!(self, target, dcmi_get_device_boot_status, dcmiv2_get_device_boot_status(&mut status));
        check(code, target.context(call))?;
        Ok(status.0)
    }

    /// `dcmi_subscribe_fault_event(-1, -1, zeroed filter, callback)`: every chip, no filter. The callback copies each
    /// event and hands it to `sink`; on success the library is pinned (never unloaded). On the V2 API this is
    /// `dcmiv2_subscribe_fault_event(-1, zeroed filter, callback)`.
    ///
    /// The driver keeps one callback per process and the C callback takes no user-data pointer, so the sink is
    /// process-wide: a later subscription replaces it.
    pub fn subscribe_fault_events(&self, sink: FaultEventSink) -> Result<()> {
        let filter = sys::dcmi_event_filter::default();
        *FAULT_EVENT_SINK.write() = Some(sink);
        // SAFETY (both arms): the filter is passed by value as the ABI requires; the callback is an `extern "C"`
        // function that never unwinds and stays valid for the whole process (it is a plain function, and the library
        // is pinned so that the driver's thread never outlives the code it calls). -1 means every chip.
        let (code, call) = match self.family() {
            ApiFamily::V1 => {
                let call = function!(self.dcmi_subscribe_fault_event);
                // SAFETY: see above.
                (unsafe { call(-1, -1, filter, Some(fault_event_callback)) }, "dcmi_subscribe_fault_event")
            }
            ApiFamily::V2 => {
                let call = function!(self.dcmiv2_subscribe_fault_event);
                // SAFETY: see above.
                (unsafe { call(-1, filter, Some(fault_event_callback)) }, "dcmiv2_subscribe_fault_event")
            }
        };
        check(code, CallContext::global(call))?;
        self.pin();
        Ok(())
    }
}

impl Drop for LoadedLibrary {
    fn drop(&mut self) {
        // Errors of dlclose cannot be reported from Drop; `Dcmi::shutdown` reports them.
        let _ = self.release();
    }
}

/// Marker for the structs `dcmi_get_device_info` may write into.
pub(crate) trait DeviceInfoBuffer {
    /// Whether the query exists on the V2 API (`dcmiv2_get_device_info`) too.
    const ON_V2: bool = false;
}
impl DeviceInfoBuffer for sys::dcmi_soc_total_resource {}
impl DeviceInfoBuffer for sys::dcmi_soc_free_resource {}
impl DeviceInfoBuffer for sys::dcmi_vdev_query_stru {}
impl DeviceInfoBuffer for sys::dcmi_hccs_statistic_info {}
impl DeviceInfoBuffer for sys::dcmi_hccs_statistic_info_u64 {}
/// Super-pod placement (main command 12, sub command 1); Huawei's plugin reads it on Ascend950 with the V2 call.
impl DeviceInfoBuffer for sys::dcmi_spod_info {
    const ON_V2: bool = true;
}
/// Ascend950 reports SIO errors through `dcmiv2_get_device_info` (Huawei's `collector_for_sio.go` supports it).
impl DeviceInfoBuffer for sys::dcmi_sio_crc_err_statistic_info {
    const ON_V2: bool = true;
}

/// A fault event copied out of the driver's memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawFaultEvent {
    pub event_id: u32,
    pub logic: u16,
    pub severity: u8,
    pub assertion: u8,
    pub name: String,
}

/// Where the callback hands the events it copies.
pub(crate) type FaultEventSink = fn(RawFaultEvent);

/// The sink of the process's one subscription (see [`LoadedLibrary::subscribe_fault_events`]).
static FAULT_EVENT_SINK: RwLock<Option<FaultEventSink>> = RwLock::new(None);

/// The callback handed to the driver. Runs on a driver thread; must never unwind into C.
extern "C" fn fault_event_callback(event: *mut sys::dcmi_event) {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        if event.is_null() {
            return;
        }
        // SAFETY: the driver passes a pointer to an event that is valid for the duration of the call (checked
        // non-null above); we only read it, and copy what we keep.
        let event = unsafe { &*event };
        if event.type_ != sys::dcmi_event_type::DCMI_DMS_FAULT_EVENT {
            return;
        }
        // SAFETY: the type tag says the union holds a `dcmi_dms_fault_event`, a plain-data struct.
        let fault = unsafe { event.event_t.dms_event };
        // Copied out so that the sink runs without the lock held.
        let Some(sink) = *FAULT_EVENT_SINK.read() else { return };
        sink(RawFaultEvent {
            event_id: fault.event_id,
            logic: fault.deviceid,
            severity: fault.severity,
            assertion: fault.assertion,
            name: c_string(&fault.event_name),
        });
    }));
    // A panic in our code (or in a user's channel consumer's drop glue) stops here; the event is lost, the process
    // and the driver's thread are not.
    drop(outcome);
}

/// The logic ids of `dcmiv2_get_device_list`: the first `count` entries (a count the driver got wrong is clamped to
/// the list), negative ids skipped.
pub(crate) fn decode_device_list(list: &[c_int], count: c_int) -> Vec<LogicId> {
    let count = usize::try_from(count).unwrap_or(0).min(list.len());
    list[..count].iter().filter_map(|id| u32::try_from(*id).ok()).map(LogicId).collect()
}

/// The raised fault codes of `dcmi_get_device_errorcode_v2` / `dcmiv2_get_device_error_code_list`: the first `count`
/// slots, clamped to the list, zeros skipped.
pub(crate) fn decode_fault_codes(codes: &[c_uint], count: c_int) -> FaultCodes {
    let count = usize::try_from(count).unwrap_or(0).min(codes.len());
    FaultCodes::from_codes(codes[..count].iter().map(|code| FaultCode(u64::from(*code))))
}

/// The text fields of an electronic label (V1 card label, V2 chip label), each cut at its NUL or its buffer's end.
pub(crate) fn decode_elabel(label: &sys::dcmi_elabel_info) -> Elabel {
    Elabel {
        product_name: c_string(&label.product_name),
        model: c_string(&label.model),
        manufacturer: c_string(&label.manufacturer),
        manufacturer_date: c_string(&label.manufacturer_date),
        serial_number: c_string(&label.serial_number),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_stop_at_the_first_nul_and_tolerate_no_nul() {
        assert_eq!(c_string(&[b'9', b'1', b'0', 0, b'X']), "910");
        assert_eq!(c_string(&[b'a'; 4]), "aaaa");
        let signed: [c_char; 3] = [0x41, 0, 0x42];
        assert_eq!(c_string(&signed), "A");
        assert_eq!(c_string(&[0xFFu8, 0]), "\u{FFFD}");
    }

    #[test]
    fn in_place_comparison_agrees_with_decoding() {
        let buffers: [&[u8]; 5] = [b"910B3\0junk", b" Ascend \0", b"\0", b"full", b"bad\xFF\0"];
        for buffer in buffers {
            let decoded = c_string(buffer);
            let valid_utf8 = !decoded.contains('\u{FFFD}');
            assert_eq!(c_string_is(buffer, &decoded), valid_utf8, "{buffer:?}");
            assert!(!c_string_is(buffer, &format!("{decoded}x")), "{buffer:?}");
        }
        let signed: [c_char; 4] = [0x41, 0x42, 0, 0x43];
        assert!(c_string_is(&signed, "AB"));
        assert!(!c_string_is(&signed, "ABC"));
        // Longer than the stack chunk, with a byte that is not UTF-8: never equal to its lossy decoding.
        let mut long = vec![b'a'; 5000];
        long[4500] = 0xFF;
        assert!(!c_string_is(&long, &c_string(&long)));
        assert!(c_string_is(&[b'b'; 5000], &"b".repeat(5000)));
    }

    #[test]
    fn the_callback_ignores_null_and_survives() {
        fault_event_callback(std::ptr::null_mut());
    }
}
