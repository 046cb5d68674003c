//! The opaque configuration a claim or DeviceClass can address to this driver
//! (`spec.devices.config[].opaque` with `driver: npu.huawei.com`).
//!
//! ```yaml
//! opaque:
//!   driver: npu.huawei.com
//!   parameters:
//!     apiVersion: npu.huawei.com/v1alpha1
//!     kind: NpuConfig
//!     env:
//!       HCCL_CONNECT_TIMEOUT: "600"
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;

/// `apiVersion` of [`NpuConfig`].
pub const API_VERSION: &str = "npu.huawei.com/v1alpha1";
/// `kind` of [`NpuConfig`].
pub const KIND: &str = "NpuConfig";

/// Variables the driver sets itself and a configuration must not override.
const RESERVED_ENV: [&str; 2] = ["ASCEND_RT_VISIBLE_DEVICES", "ASCEND_VISIBLE_DEVICES"];

/// Settings for the containers using a claim's NPUs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NpuConfig {
    /// Must be [`API_VERSION`].
    pub api_version: String,
    /// Must be [`KIND`].
    pub kind: String,
    /// Extra environment variables for the containers.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// Parses and checks one opaque configuration; the error says what is wrong in terms of the YAML a user wrote.
///
/// # Errors
/// A message naming the field or value at fault.
pub fn parse(parameters: &serde_json::Value) -> Result<NpuConfig, String> {
    let config: NpuConfig = serde_json::from_value(parameters.clone())
        .map_err(|e| format!("opaque parameters are not a valid {KIND}: {e}"))?;
    if config.api_version != API_VERSION || config.kind != KIND {
        return Err(format!(
            "opaque parameters have apiVersion {:?} and kind {:?}; this driver reads apiVersion {API_VERSION:?}, kind {KIND:?}",
            config.api_version, config.kind
        ));
    }
    for name in config.env.keys() {
        let valid = name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !valid {
            return Err(format!("env name {name:?} is not a valid variable name"));
        }
        if RESERVED_ENV.contains(&name.as_str()) {
            return Err(format!("env {name} is set by the driver from the allocated chips and cannot be overridden"));
        }
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_valid_config_parses_and_every_mistake_is_named() {
        let good = json!({"apiVersion": API_VERSION, "kind": KIND, "env": {"HCCL_TIMEOUT": "600"}});
        assert_eq!(parse(&good).unwrap().env["HCCL_TIMEOUT"], "600");
        let cases = [
            (json!({"apiVersion": API_VERSION, "kind": KIND, "envs": {}}), "unknown field `envs`"),
            (json!({"apiVersion": "v1", "kind": KIND}), "this driver reads apiVersion"),
            (json!({"apiVersion": API_VERSION, "kind": KIND, "env": {"1X": "a"}}), "\"1X\" is not a valid"),
            (
                json!({"apiVersion": API_VERSION, "kind": KIND, "env": {"ASCEND_RT_VISIBLE_DEVICES": "0"}}),
                "cannot be overridden",
            ),
            (json!("text"), "not a valid NpuConfig"),
        ];
        for (parameters, expected) in cases {
            let error = parse(&parameters).unwrap_err();
            assert!(error.contains(expected), "{parameters}: {error}");
        }
    }
}
