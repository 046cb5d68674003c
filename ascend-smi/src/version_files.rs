//! The version files of Huawei's packages: `key=value` lines, `#` comments.
//!
//! * driver: `/usr/local/Ascend/driver/version.info` with `Version=24.1.rc2` (or `package_version=`), and
//!   `compatible_version_fw=[7.0.0,7.99.99]`, the firmware range the driver accepts;
//! * firmware: `/usr/local/Ascend/firmware/version.info` with `Version=7.5.0.1.129`;
//! * CANN toolkit: `<toolkit>/latest/version.cfg` with `version=8.0.RC3`, or only the
//!   `runtime_running_version=[<inner>:<release>]` lines of older toolkits (the release after the colon is used).

/// Where the driver's version file is, relative to the host root.
pub const DRIVER_VERSION_FILE: &str = "/usr/local/Ascend/driver/version.info";
/// Where the firmware's version file is, relative to the host root.
pub const FIRMWARE_VERSION_FILE: &str = "/usr/local/Ascend/firmware/version.info";
/// Where the host toolkit's version file is, relative to the host root.
pub const TOOLKIT_VERSION_FILE: &str = "/usr/local/Ascend/ascend-toolkit/latest/version.cfg";

/// The `key=value` pairs of a version file, in order; comments and lines without `=` are skipped.
pub fn key_values(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| line.split_once('='))
        .map(|(key, value)| (key.trim().to_owned(), value.trim().trim_matches('"').to_owned()))
        .collect()
}

fn value_of(text: &str, keys: &[&str]) -> Option<String> {
    let pairs = key_values(text);
    keys.iter()
        .find_map(|key| pairs.iter().find(|(name, _)| name.eq_ignore_ascii_case(key)).map(|(_, value)| value.clone()))
        .filter(|value| !value.is_empty())
}

/// The driver version of a `version.info`.
pub fn driver_version(text: &str) -> Option<String> {
    value_of(text, &["Version", "package_version"])
}

/// The firmware version of the firmware's `version.info`.
pub fn firmware_version(text: &str) -> Option<String> {
    value_of(text, &["Version"])
}

/// The toolkit version of a `version.cfg`.
pub fn toolkit_version(text: &str) -> Option<String> {
    if let Some(version) = value_of(text, &["version"]) {
        return Some(version);
    }
    let running = value_of(text, &["runtime_running_version"])?;
    let inner = running.trim_start_matches('[').trim_end_matches(']');
    let release = inner.rsplit_once(':').map_or(inner, |(_, release)| release);
    (!release.is_empty()).then(|| release.to_owned())
}

/// The firmware range `compatible_version_fw=[low,high]` a driver's `version.info` declares.
pub fn compatible_firmware_range(text: &str) -> Option<(String, String)> {
    let value = value_of(text, &["compatible_version_fw"])?;
    let inner = value.trim_start_matches('[').trim_end_matches(']');
    let (low, high) = inner.split_once(',')?;
    Some((low.trim().to_owned(), high.trim().to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_files_the_packages_write() {
        let driver = "Version=24.1.rc2\npackage_version=24.1.rc2\ncompatible_version_fw=[7.0.0,7.99.99]\n";
        assert_eq!(driver_version(driver).as_deref(), Some("24.1.rc2"));
        assert_eq!(compatible_firmware_range(driver), Some(("7.0.0".to_owned(), "7.99.99".to_owned())));
        assert_eq!(driver_version("package_version=23.0.3\n").as_deref(), Some("23.0.3"));
        assert_eq!(toolkit_version("# c\nversion=8.0.RC3\n").as_deref(), Some("8.0.RC3"));
        assert_eq!(toolkit_version("runtime_running_version=[7.0.0.5.242:7.0.RC1]\n").as_deref(), Some("7.0.RC1"));
        assert_eq!(firmware_version("Version=7.5.0.1.129\n").as_deref(), Some("7.5.0.1.129"));
        assert_eq!(driver_version("nothing here\n"), None);
    }
}
