//! Marks the cdylib `-z nodelete`: the simulator runs a background thread, and a consumer that
//! `dlclose`s the library (as the Go stack does on shutdown) must not unmap code that thread runs.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    println!("cargo:rerun-if-changed=build.rs");
}
