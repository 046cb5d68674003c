//! Shared test plumbing: the simulator library loaded through the raw bindings, and sessions that
//! point `DCMI_SIM_CONFIG` at a topology and call `dcmi_init`. The simulator is process-wide, so
//! sessions hold a lock: tests in one binary run one at a time against it.

// Calls the simulator through its C ABI, as the real library is called.
#![allow(unsafe_code)]
#![allow(dead_code)] // each test binary uses a different part of this module

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock};

use dcmi_sim::Sampler;
use dcmi_sim::Topology;
use dcmi_sys::DcmiLib;

/// Calls a DCMI function through the raw bindings and records that it was called.
macro_rules! call {
    ($lib:expr, $name:ident ( $($arg:expr),* $(,)? )) => {{
        $crate::common::record(stringify!($name));
        let function = $lib.$name.as_ref().expect(concat!("symbol ", stringify!($name)));
        // SAFETY: the simulator exports this symbol with the bindings' signature (checked at compile
        // time in dcmi-sim), and every pointer argument points to a live local of the right type.
        // The lint level is the caller's, not this module's, so the macro allows its own block.
        #[allow(unsafe_code)]
        let status = unsafe { function($($arg),*) };
        status
    }};
}

static LIBRARY: OnceLock<DcmiLib> = OnceLock::new();
static SESSION_LOCK: Mutex<()> = Mutex::new(());
static CALLED: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());

/// The simulator loaded with `dlopen` from the built `libdcmi_sim.so`.
pub fn lib() -> &'static DcmiLib {
    LIBRARY.get_or_init(|| {
        let path = dcmi_sim::library_path().unwrap_or_else(|error| panic!("{error}"));
        // SAFETY: libdcmi_sim.so exports the header's functions with the bindings' signatures.
        unsafe { DcmiLib::new(&path) }.unwrap_or_else(|error| panic!("loading {}: {error}", path.display()))
    })
}

/// Notes that `name` was called.
pub fn record(name: &'static str) {
    CALLED.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(name);
}

/// Every function called so far in this process.
pub fn called() -> BTreeSet<&'static str> {
    CALLED.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
}

/// Every function the V1 and V2 headers declare.
pub fn header_functions() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for file in ["dcmi_interface_api.h", "dcmi_interface_api_v2.h"] {
        let header = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../dcmi-sys/include").join(file);
        let text = std::fs::read_to_string(&header).unwrap_or_else(|error| panic!("{}: {error}", header.display()));
        names.extend(
            text.split("DCMIDLLEXPORT int ")
                .skip(1)
                .filter_map(|rest| rest.split('(').next())
                .map(|name| name.trim().to_owned()),
        );
    }
    names
}

/// A running simulator for one topology; dropping it releases the process-wide lock.
pub struct Session {
    pub lib: &'static DcmiLib,
    pub topology: Topology,
    pub dir: tempfile::TempDir,
    pub config: PathBuf,
    pub overlay: PathBuf,
    _guard: MutexGuard<'static, ()>,
}

/// Writes `toml` to a temporary topology file, points the environment at it (and at an overlay
/// path in the same directory, not yet written) and calls the init function of the topology's API
/// family (`dcmi_init` or `dcmiv2_init`), which must succeed.
pub fn start(toml: &str) -> Session {
    let guard = SESSION_LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let dir = tempfile::tempdir().expect("temporary directory");
    let config = dir.path().join("topology.toml");
    let overlay = dir.path().join("overlay.toml");
    std::fs::write(&config, toml).expect("write topology");
    let topology = Topology::load(&config).unwrap_or_else(|error| panic!("{error}"));
    std::env::set_var(dcmi_sim::CONFIG_ENV, &config);
    std::env::set_var(dcmi_sim::OVERLAY_ENV, &overlay);
    let lib = lib();
    if topology.api() == dcmi_sim::Api::V2 {
        assert_eq!(call!(lib, dcmiv2_init()), 0, "dcmiv2_init on {}", config.display());
    } else {
        assert_eq!(call!(lib, dcmi_init()), 0, "dcmi_init on {}", config.display());
    }
    Session { lib, topology, dir, config, overlay, _guard: guard }
}

/// Unix time in ms now.
pub fn now_ms() -> u64 {
    dcmi_sim::unix_now_ms()
}

/// Asserts that `value` equals what `expected` gives at some tick between `before_ms` and
/// `after_ms` (the call happened in between).
pub fn assert_sampled<T: PartialEq + std::fmt::Debug>(
    what: &str,
    topology: &Topology,
    before_ms: u64,
    after_ms: u64,
    value: T,
    expected: impl Fn(&Sampler) -> T,
) {
    let first = Sampler::at_unix_ms(topology, before_ms).tick;
    let last = Sampler::at_unix_ms(topology, after_ms).tick;
    let candidates: Vec<T> = (first..=last).map(|tick| expected(&Sampler::at_tick(topology, tick))).collect();
    assert!(candidates.contains(&value), "{what}: got {value:?}, expected one of {candidates:?}");
}

/// A C string field as text.
pub fn text<T: Copy + Into<i64>>(field: &[T]) -> String {
    let bytes: Vec<u8> = field.iter().map(|byte| (*byte).into() as u8).take_while(|byte| *byte != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}
