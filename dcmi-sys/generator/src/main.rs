//! Generates the dynamic-loading bindings of `dcmi-sys` from the authored header.
//!
//! Usage: `dcmi-sys-generator <header> <output.rs>` (normally via `gen_bindings.sh`, with the V2
//! header, which includes the V1 one).

use std::env;
use std::path::PathBuf;
use std::process::ExitCode;

use bindgen::callbacks::{IntKind, ParseCallbacks};
use bindgen::{EnumVariation, Formatter, RustEdition};

/// Name of the generated struct that owns the `libloading::Library` and one
/// `Result<fn pointer, libloading::Error>` field per DCMI function.
const DYNAMIC_LIBRARY_STRUCT: &str = "DcmiLib";

/// Adjusts bindgen's defaults: macro integer types and member doc comments.
#[derive(Debug)]
struct HeaderConventions;

impl ParseCallbacks for HeaderConventions {
    fn int_macro(&self, name: &str, _value: i64) -> Option<IntKind> {
        // The filter flags are `1UL << n` and are or-ed into the 64-bit
        // `dcmi_event_filter.filter_flag`; keep them u64 instead of bindgen's u32.
        name.starts_with("DCMI_EVENT_FILTER_FLAG_").then_some(IntKind::U64)
    }

    fn process_comment(&self, comment: &str) -> Option<String> {
        // Trailing member comments are written `/**< text */` (Doxygen style);
        // bindgen keeps the `<`.
        comment.strip_prefix('<').map(|text| format!(" {}", text.trim_start()))
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let [header, output] = args.as_slice() else {
        eprintln!("usage: dcmi-sys-generator <dcmi_interface_api_v2.h> <output.rs>");
        return ExitCode::from(2);
    };
    // Every header of the include directory: the V2 header includes the V1 one, which
    // declares the types both families share.
    let header_directory = PathBuf::from(header).parent().map(|directory| directory.to_path_buf()).unwrap_or_default();
    let header_file_pattern = format!("{}/.*\\.h", regex_escape(&header_directory.to_string_lossy()));

    let builder = bindgen::Builder::default()
        .header(header.as_str())
        // The header declares every prototype `static` (like the vendor's);
        // bindgen skips functions without external linkage, so drop the keyword.
        .clang_arg("-DDCMIDLLEXPORT=")
        // Only what the DCMI header itself declares: no libc or compiler items.
        .allowlist_file(header_file_pattern)
        .dynamic_library_name(DYNAMIC_LIBRARY_STRUCT)
        .dynamic_link_require_all(false)
        // Newtype enums (`pub struct dcmi_boot_status(pub c_uint)`) accept any
        // value the driver returns, such as boot status 16; a Rust `enum` would
        // make such a value undefined behaviour.
        .default_enum_style(EnumVariation::NewType { is_bitfield: false, is_global: false })
        .derive_debug(true)
        .impl_debug(true)
        .derive_default(true)
        .derive_copy(true)
        .derive_partialeq(true)
        .derive_eq(true)
        .derive_hash(true)
        .layout_tests(true)
        .generate_comments(true)
        .wrap_unsafe_ops(true)
        .rust_edition(RustEdition::Edition2021)
        .formatter(Formatter::None)
        .parse_callbacks(Box::new(HeaderConventions));

    let bindings = match builder.generate() {
        Ok(bindings) => bindings,
        Err(error) => {
            eprintln!("bindgen failed on {header}: {error}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(error) = bindings.write_to_file(output) {
        eprintln!("cannot write {output}: {error}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// Escapes the regex metacharacters that can occur in a file name.
fn regex_escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        if "\\.+*?()|[]{}^$".contains(character) {
            escaped.push('\\');
        }
        escaped.push(character);
    }
    escaped
}
