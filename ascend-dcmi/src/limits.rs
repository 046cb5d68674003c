//! The driver's fixed limits, in one place: the sizes of the tables DCMI fills and of the lists this crate keeps
//! inline. The FFI layer sizes its buffers from them and the model types size their arrays from them, so a driver
//! generation that raises a limit changes one line.

/// The most cards DCMI reports (`HiAIMaxCardNum`).
pub const MAX_CARDS: usize = 64;

/// The most chips on one card (`HiAIMaxDeviceNum`).
pub const MAX_CHIPS_PER_CARD: usize = 4;

/// The most logic ids DCMI hands out: every chip of every card.
pub const MAX_CHIPS: usize = MAX_CARDS * MAX_CHIPS_PER_CARD;

/// The most fault codes DCMI reports per chip (`MaxErrorCodeCount`).
pub const MAX_FAULT_CODES: usize = 128;

/// The most processes DCMI reports per chip.
pub const MAX_PROCESSES: usize = 32;

/// Number of HCCS links DCMI reports.
pub const HCCS_LINKS: usize = 16;
