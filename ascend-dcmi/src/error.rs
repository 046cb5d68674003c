//! The crate's error type: one variant per DCMI return code, plus the failures of loading and of our own checks.
//!
//! The DCMI return codes are written once, in the table of the `errors!` invocation below: the variants, their
//! messages, [`Error::from_code`], [`Error::code`], [`Error::context`] and [`code_meaning`] all come from it.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::ids::{ChipLocator, LogicId};

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Which DCMI call failed, and on which chip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallContext {
    /// The C function, for example `"dcmi_get_device_temperature"`.
    pub call: &'static str,
    /// The chip the call was about, when it was about one.
    pub chip: Option<ChipLocator>,
    /// The chip's logic id, when known.
    pub logic: Option<LogicId>,
}

impl CallContext {
    /// A context for a call that is not about one chip.
    pub const fn global(call: &'static str) -> Self {
        Self { call, chip: None, logic: None }
    }

    /// A context for a call about one chip: its `(card, device)` (a [`ChipLocator`], or an `Option` of one, `None`
    /// on the V2 API) and its logic id.
    pub fn chip(call: &'static str, chip: impl Into<Option<ChipLocator>>, logic: Option<LogicId>) -> Self {
        Self { call, chip: chip.into(), logic }
    }
}

impl fmt::Display for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.call)?;
        match (self.chip, self.logic) {
            (Some(chip), Some(logic)) => write!(f, " on chip logic {logic} ({chip})"),
            (Some(chip), None) => write!(f, " on {chip}"),
            (None, Some(logic)) => write!(f, " on chip logic {logic}"),
            (None, None) => Ok(()),
        }
    }
}

/// Declares [`Error`] from the table of DCMI return codes (each one variant holding the [`CallContext`], with its
/// code and meaning) followed by the variants that are not return codes, and derives from the same table the
/// functions that map codes to variants and back. One table, so a code cannot be added to one mapping and missed in
/// another.
macro_rules! errors {
    (
        codes {
            $( $(#[$code_doc:meta])* $variant:ident = $code:literal, $meaning:literal; )*
        }
        others { $($others:tt)* }
    ) => {
        /// Everything that can go wrong when talking to DCMI.
        #[derive(Debug, thiserror::Error)]
        #[non_exhaustive]
        pub enum Error {
            $(
                $(#[$code_doc])*
                #[error("{0}: {meaning} (DCMI {code})", meaning = $meaning, code = $code)]
                $variant(CallContext),
            )*
            $($others)*
        }

        impl Error {
            /// Maps a non-zero DCMI return code to its variant. This is the only place that knows the codes.
            pub fn from_code(code: i32, context: CallContext) -> Self {
                match code {
                    $( $code => Error::$variant(context), )*
                    code => Error::Unknown { context, code },
                }
            }

            /// The return code and context of a variant of the table.
            fn tabled(&self) -> Option<(i32, &CallContext)> {
                match self {
                    $( Error::$variant(context) => Some(($code, context)), )*
                    _ => None,
                }
            }
        }

        /// A one-line meaning of a DCMI return code, for messages about codes that are not yet an [`Error`].
        pub fn code_meaning(code: i32) -> &'static str {
            match code {
                0 => "success",
                $( $code => $meaning, )*
                _ => "unknown error code",
            }
        }
    };
}

errors! {
    codes {
        /// -8001: an input parameter was rejected.
        InvalidParameter = -8001, "input parameter incorrect";
        /// -8002: the caller lacks permission.
        PermissionDenied = -8002, "permission denied";
        /// -8003: a memory interface operation failed in the driver.
        MemoryOperation = -8003, "memory interface operation failed";
        /// -8004: a security function failed in the driver.
        SecurityFunction = -8004, "security function failed";
        /// -8005: internal error; inside containers usually a missing device node or driver file.
        Internal = -8005, "internal error";
        /// -8006: the driver did not answer in time.
        ResponseTimeout = -8006, "response timed out";
        /// -8007: the device id is invalid.
        InvalidDeviceId = -8007, "invalid device id";
        /// -8008: the device does not exist.
        DeviceNotFound = -8008, "device does not exist";
        /// -8009: an ioctl failed.
        Ioctl = -8009, "ioctl failed";
        /// -8010: sending a message to the device failed.
        SendFailed = -8010, "message send failed";
        /// -8011: receiving a message from the device failed.
        ReceiveFailed = -8011, "message receive failed";
        /// -8012: not ready yet; on health calls this means the card dropped off the bus or is rebooting.
        NotReady = -8012, "device not ready, try again; the card may have dropped";
        /// -8013: the call is not supported inside containers.
        NotSupportedInContainer = -8013, "not supported in containers";
        /// -8014: a file operation failed in the driver.
        FileOperation = -8014, "file operation failed";
        /// -8015: a reset failed.
        ResetFailed = -8015, "reset failed";
        /// -8016: a reset was cancelled.
        ResetCancelled = -8016, "reset cancelled";
        /// -8017: the device is upgrading.
        Upgrading = -8017, "device is upgrading";
        /// -8020: device resources are occupied.
        ResourceOccupied = -8020, "device resources occupied";
        /// -8022: partition consistency check failed.
        PartitionCheckFailed = -8022, "partition consistency check failed";
        /// -8023: the configuration does not exist.
        ConfigNotFound = -8023, "configuration does not exist";
        /// -8255: this chip or driver does not support the call.
        NotSupported = -8255, "not supported by this chip or driver";
    }
    others {
        /// A return code this crate does not know; the raw number is kept.
        #[error("{context}: DCMI error {code}")]
        Unknown {
            /// The failed call.
            context: CallContext,
            /// The raw return code.
            code: i32,
        },

        /// No `libdcmi.so` was found in any searched place.
        #[error("libdcmi.so not found; searched: {}", display_paths(.searched))]
        LibraryNotFound {
            /// Every candidate path that was tried, in order.
            searched: Vec<PathBuf>,
        },
        /// `dlopen` failed.
        #[error("cannot load {path}: {source}")]
        LibraryLoad {
            /// The library file.
            path: PathBuf,
            /// What the loader said.
            #[source]
            source: libloading::Error,
        },
        /// The library file or one of its parent directories fails the ownership/permission check the vendor's tools make.
        #[error("refusing to load {library}: {path} is owned by uid {uid} with mode {mode:04o}; {problem}")]
        UnsafeLibrary {
            /// The library that was to be loaded.
            library: PathBuf,
            /// The offending file or directory (the library itself or a parent).
            path: PathBuf,
            /// Its owner.
            uid: u32,
            /// Its permission bits.
            mode: u32,
            /// What is wrong and how to fix it.
            problem: String,
        },
        /// The loaded library lacks this function (an older driver); only calls that need it fail.
        #[error("{0} is missing from libdcmi.so; upgrade the driver to use it")]
        FunctionMissing(&'static str),
        /// The driver serves the other API family, which has no such call: vNPUs, HCCS, card power and product type
        /// are not available on the V2 API (Ascend950); UB port counters are not available on the V1 API.
        #[error("{call} is not available on the {family} API")]
        UnavailableOnApi {
            /// The C function (of the family that has it).
            call: &'static str,
            /// The family the driver serves.
            family: crate::api_family::ApiFamily,
        },
        /// `dcmi_init` returned an error code.
        #[error("dcmi_init failed with code {code}: {meaning}")]
        InitFailed {
            /// The raw return code.
            code: i32,
            /// What the code means.
            meaning: &'static str,
        },
        /// Unloading the library failed.
        #[error("dcmi shutdown failed: {0}")]
        ShutdownFailed(#[source] libloading::Error),
        /// A call did not return within its deadline; it keeps running on its worker thread.
        #[error("{context}: no answer within {deadline:?}")]
        Timeout {
            /// The call that hung.
            context: CallContext,
            /// The deadline that elapsed.
            deadline: Duration,
        },
        /// The driver returned a value outside the documented range.
        #[error("{context}: driver returned an invalid value: {detail}")]
        InvalidValue {
            /// The call.
            context: CallContext,
            /// What was wrong with the value.
            detail: String,
        },
        /// An argument was rejected before calling the driver (for example a profiling window out of range).
        #[error("{context}: invalid argument: {detail}")]
        InvalidArgument {
            /// The call that was not made.
            context: CallContext,
            /// What is wrong with the argument.
            detail: String,
        },
        /// A chip with this id is not present.
        #[error("no chip with {0}")]
        NoSuchChip(String),
        /// A vNPU template this chip type does not allow.
        #[error("vNPU template {template:?} is not allowed on {chip_type}; allowed: {}", .allowed.join(", "))]
        VnpuTemplateNotAllowed {
            /// The requested template.
            template: String,
            /// The chip type.
            chip_type: String,
            /// The templates this chip type allows.
            allowed: Vec<&'static str>,
        },
        /// A configuration file (for example a `faultCode.json` fault policy) could not be read or parsed.
        #[error("{path}: {detail}")]
        Config {
            /// The file.
            path: PathBuf,
            /// What is wrong, naming the field where possible.
            detail: String,
        },
        /// A worker thread could not be started or has gone.
        #[error("worker threads unavailable: {0}")]
        Worker(String),
    }
}

fn display_paths(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "nothing (no candidate paths)".to_owned();
    }
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

impl Error {
    /// The DCMI return code behind this error, when it came from a DCMI call.
    pub fn code(&self) -> Option<i32> {
        match self {
            Error::Unknown { code, .. } | Error::InitFailed { code, .. } => Some(*code),
            other => other.tabled().map(|(code, _)| code),
        }
    }

    /// The call context, when the error came from a DCMI call.
    pub fn context(&self) -> Option<&CallContext> {
        match self {
            Error::Unknown { context, .. }
            | Error::Timeout { context, .. }
            | Error::InvalidValue { context, .. }
            | Error::InvalidArgument { context, .. } => Some(context),
            other => other.tabled().map(|(_, context)| context),
        }
    }

    /// Whether the chip or driver lacks this function (-8255 or a missing symbol): asking again will not help.
    pub fn is_unsupported(&self) -> bool {
        matches!(self, Error::NotSupported(_) | Error::FunctionMissing(_) | Error::UnavailableOnApi { .. })
    }

    /// Whether the chip has dropped off the bus or is rebooting (-8012).
    pub fn is_card_drop(&self) -> bool {
        matches!(self, Error::NotReady(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{CardId, DeviceId};

    #[test]
    fn every_known_code_round_trips_through_its_variant() {
        let context = CallContext::global("dcmi_get_card_list");
        for code in (-8023..=-8001).chain([-8255]) {
            let error = Error::from_code(code, context);
            assert_eq!(error.code(), Some(code), "{error}");
            if code_meaning(code) == "unknown error code" {
                assert!(matches!(error, Error::Unknown { .. }), "{code} should be unknown");
            } else {
                assert!(!matches!(error, Error::Unknown { .. }), "{code} should have a variant");
            }
        }
    }

    #[test]
    fn messages_name_the_call_and_the_chip() {
        let locator = ChipLocator { card: CardId(3), device: DeviceId(1) };
        let context = CallContext::chip("dcmi_get_device_temperature", locator, Some(LogicId(5)));
        let message = Error::from_code(-8012, context).to_string();
        assert!(message.contains("dcmi_get_device_temperature on chip logic 5 (card 3 device 1)"), "{message}");
        assert!(message.contains("-8012"), "{message}");
        let unknown = Error::from_code(-4242, context);
        assert!(unknown.to_string().contains("-4242"));
        assert!(Error::from_code(-8255, context).is_unsupported());
        assert!(Error::from_code(-8012, context).is_card_drop());
    }
}
