//! The raw ABI, as `ascend-dcmi` calls it underneath: open `libdcmi.so`, `dcmi_init`, list the cards, read each
//! card's first chip's temperature. Every call is `unsafe` and every status code is the caller's to check; this is
//! what the safe crate exists to hide.
//!
//! ```text
//! cargo build -p dcmi-sim && DCMI_SIM_CONFIG=sample:atlas-800t-a2 \
//!     cargo run -p dcmi-sys --example raw_calls -- target/debug/libdcmi_sim.so
//! cargo run -p dcmi-sys --example raw_calls -- /usr/local/Ascend/driver/lib64/driver/libdcmi.so   # a server
//! ```
//!
//! The example fails on any non-zero status, or when the library lists no card.
#![allow(unsafe_code)] // FFI is this crate's job: each block below says why it is sound.

use std::os::raw::c_int;

use dcmi_sys::DcmiLib;

/// More cards than any Atlas server has.
const MAX_CARDS: usize = 64;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: raw_calls <path of libdcmi.so>")?;
    // SAFETY: the library is a DCMI implementation (the vendor's or dcmi-sim's), whose exported functions have the
    // signatures of the header these bindings were generated from; its initialisers are the vendor's.
    let dcmi = unsafe { DcmiLib::new(&path) }?;
    let init = dcmi.dcmi_init.as_ref().map_err(|error| format!("dcmi_init: {error}"))?;
    // SAFETY: dcmi_init takes no arguments and may be called at any time.
    check("dcmi_init", unsafe { init() })?;

    let card_list = dcmi.dcmi_get_card_list.as_ref().map_err(|error| format!("dcmi_get_card_list: {error}"))?;
    let mut cards = [0 as c_int; MAX_CARDS];
    let mut count: c_int = 0;
    // SAFETY: `count` is a valid out-pointer; `cards` holds MAX_CARDS ints and the call is told so, and writes at most
    // that many.
    check("dcmi_get_card_list", unsafe { card_list(&mut count, cards.as_mut_ptr(), MAX_CARDS as c_int) })?;
    let count = usize::try_from(count).map_err(|_| format!("dcmi_get_card_list: negative count {count}"))?;
    if count == 0 {
        return Err("the library lists no card".into());
    }
    println!("{path}: {count} cards {:?}", &cards[..count.min(MAX_CARDS)]);

    let temperature =
        dcmi.dcmi_get_device_temperature.as_ref().map_err(|error| format!("dcmi_get_device_temperature: {error}"))?;
    for &card in &cards[..count.min(MAX_CARDS)] {
        let mut celsius: c_int = 0;
        // SAFETY: `celsius` is a valid out-pointer for one int; card ids come from dcmi_get_card_list and device 0 is
        // every card's first chip.
        check("dcmi_get_device_temperature", unsafe { temperature(card, 0, &mut celsius) })?;
        println!("  card {card} device 0: {celsius} °C");
    }
    Ok(())
}

/// A DCMI status: 0 is success, anything else an error code (`ascend_dcmi::Error::from_code` names them).
fn check(call: &str, status: c_int) -> Result<(), String> {
    if status == 0 {
        Ok(())
    } else {
        Err(format!("{call} failed with DCMI status {status}"))
    }
}
