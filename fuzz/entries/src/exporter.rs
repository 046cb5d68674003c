//! The exporter's operator files: the exporter-toolkit web configuration and the metric-selection file.

use std::path::Path;

use ascend_dcmi::{MetricGroup, SamplerConfig};
use ascend_exporter::web_config::{WebConfig, BCRYPT_COSTS};
use ascend_exporter::{NamingMode, RenderPlan, Selection};

/// `--web.config.file`, parsed as the exporter does at start-up.
///
/// # Panics
/// When an accepted file carries a bcrypt cost that would stall start-up and every scrape, leaves a TLS file path
/// relative (it must be resolved against the file's directory), or a minimum TLS version above the maximum.
pub fn web_config(data: &[u8]) {
    let Some(text) = crate::text(data) else { return };
    let Ok(config) = WebConfig::parse(text, Path::new("/etc/npu-exporter"), "web.yml") else { return };
    for (user, hash) in &config.basic_auth_users {
        // The cost digits read here, not by the parser under test: `$2y$10$...` costs 10.
        let cost = hash.get(4..6).and_then(|digits| digits.parse::<u32>().ok());
        assert!(
            cost.is_some_and(|cost| BCRYPT_COSTS.contains(&cost)),
            "user {user:?}: accepted bcrypt cost of {hash:?}"
        );
    }
    if let Some(tls) = &config.tls {
        for path in [&tls.cert_file, &tls.key_file].into_iter().chain(tls.client_ca_file.as_ref()) {
            assert!(path.is_absolute(), "{} was not resolved against the file's directory", path.display());
        }
        assert!(tls.min_version <= tls.max_version, "{:?} above {:?}", tls.min_version, tls.max_version);
    }
}

/// `--metrics.selection-file`, parsed as the exporter does at start-up, then turned into the sampler's configuration
/// and the render plan.
///
/// # Panics
/// When an accepted interval is out of range, or the resolved form (the golden-file form operators diff) does not
/// parse back to the same selection.
pub fn metric_selection(data: &[u8]) {
    let Some(text) = crate::text(data) else { return };
    let Ok(selection) = Selection::parse(text, "selection.toml") else { return };
    for group in MetricGroup::ALL {
        let interval = selection.group(group).interval;
        assert!(
            (Selection::MIN_INTERVAL..=Selection::MAX_INTERVAL).contains(&interval),
            "{group:?}: accepted interval {interval:?}"
        );
    }
    let _ = selection.sampler_config(SamplerConfig::default());
    let _ = RenderPlan::new(NamingMode::Both, &selection);
    let resolved = selection.to_resolved_toml();
    let again = Selection::parse(&resolved, "resolved.toml")
        .unwrap_or_else(|error| panic!("the resolved form does not parse: {error}\n{resolved}"));
    assert_eq!(again.to_resolved_toml(), resolved, "resolving is not idempotent");
}
