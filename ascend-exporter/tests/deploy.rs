//! The monitoring artifacts under deploy/: alert rules and their promtool unit tests, the scrape configuration, the
//! Grafana dashboard and the example web config; every metric they name must be one the exporter serves.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use ascend_exporter::catalogue::CATALOGUE;
use ascend_exporter::web_config::WebConfig;

fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy")
}

/// The alert rules: the Helm chart's, which serves them as a PrometheusRule; Prometheus without the operator loads the
/// same file (deploy/prometheus/scrape.yaml names it).
fn alerts() -> PathBuf {
    deploy().join("helm/ascend-npu/files/alerts.yaml")
}

fn promtool(args: &[&str], dir: &Path) -> (bool, String) {
    let output = Command::new("promtool")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("promtool must be installed (Debian package `prometheus`, see scripts/deps/debian.txt)");
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), text)
}

/// Every `ascend_npu_*` name in `text`, with the `_total`/`_info` suffixes as exposed.
fn native_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(start) = rest.find("ascend_npu_") {
        let tail = &rest[start..];
        let end = tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(tail.len());
        names.insert(tail[..end].to_owned());
        rest = &tail[end..];
    }
    names
}

fn assert_served(names: &BTreeSet<String>, file: &str) {
    let served: BTreeSet<String> = CATALOGUE.iter().map(|m| m.exposed_name()).collect();
    let unknown: Vec<&String> = names.iter().filter(|name| !served.contains(*name)).collect();
    assert!(unknown.is_empty(), "{file} names metrics the exporter does not serve: {unknown:?}");
    assert!(!names.is_empty(), "{file} names no exporter metric");
}

#[test]
fn alert_rules_pass_promtool_and_their_unit_tests() {
    let dir = deploy().join("prometheus");
    let (ok, output) = promtool(&["check", "rules", alerts().to_str().expect("path")], &dir);
    assert!(ok, "promtool check rules: {output}");
    let (ok, output) = promtool(&["test", "rules", "alerts_test.yaml"], &dir);
    assert!(ok, "promtool test rules: {output}");
    let rules = std::fs::read_to_string(alerts()).expect("read alerts.yaml");
    assert_served(&native_names(&rules), "alerts.yaml");
    for alert in [
        "AscendNpuTemperatureHigh",
        "AscendNpuIdleWhileAllocated",
        "AscendNpuHbmAlmostFull",
        "AscendNpuUnhealthy",
        "AscendNpuSampleStale",
        "AscendNpuNetworkLinkDown",
        "AscendNpuNetworkLinkFlapping",
        "AscendNpuOpticalRxPowerLow",
    ] {
        assert!(rules.contains(&format!("alert: {alert}")), "{alert} missing");
    }
}

#[test]
fn scrape_configuration_discovers_pods_and_adds_the_node_label() {
    let dir = deploy().join("prometheus");
    let text = std::fs::read_to_string(dir.join("scrape.yaml")).expect("read scrape.yaml");
    let config: serde_json::Value = serde_yaml_ng::from_str(&text).expect("scrape.yaml is YAML");
    let job = &config["scrape_configs"][0];
    assert_eq!(job["job_name"], "npu-exporter");
    assert_eq!(job["kubernetes_sd_configs"][0]["role"], "pod");
    let relabels = job["relabel_configs"].as_array().expect("relabel_configs");
    assert!(relabels
        .iter()
        .any(|r| r["target_label"] == "node" && r["source_labels"][0] == "__meta_kubernetes_pod_node_name"));
    for clashing in ["namespace", "pod", "container"] {
        assert!(
            !relabels.iter().any(|r| r["target_label"] == clashing),
            "target label {clashing} would shadow the exporter's"
        );
    }
    // Debian's promtool lacks Kubernetes discovery: check everything else with a static target in its place.
    let checked = tempfile::tempdir().expect("temp dir");
    let static_variant = text
        .replace(
            "    kubernetes_sd_configs:\n      - role: pod\n        namespaces:\n          names: [ascend-inference-310p, ascend-training-910b]\n",
            "    static_configs:\n      - targets: ['127.0.0.1:8082']\n",
        )
        .replace(
            "    kubernetes_sd_configs:\n      - role: pod\n        namespaces:\n          names: [ascend-inference-310p, ascend-training-910b, ascend-dra]\n",
            "    static_configs:\n      - targets: ['127.0.0.1:11251']\n",
        )
        .replace("  - ../helm/ascend-npu/files/alerts.yaml\n", "  - alerts.yaml\n");
    assert!(!static_variant.contains("    kubernetes_sd_configs:\n"), "each discovery block has the expected shape");
    std::fs::write(checked.path().join("scrape.yaml"), static_variant).expect("write");
    std::fs::copy(alerts(), checked.path().join("alerts.yaml")).expect("copy rules");
    let (ok, output) = promtool(&["check", "config", "scrape.yaml"], checked.path());
    assert!(ok, "promtool check config: {output}");
}

#[test]
fn dashboard_queries_parse_and_name_served_metrics() {
    let text = std::fs::read_to_string(deploy().join("grafana/ascend-npu.json")).expect("read dashboard");
    let dashboard: serde_json::Value = serde_json::from_str(&text).expect("dashboard is JSON");
    let panels = dashboard["panels"].as_array().expect("panels");
    let titles: Vec<&str> = panels.iter().filter_map(|p| p["title"].as_str()).collect();
    for needed in
        ["AI-core utilisation", "HBM in use", "Temperature", "Power", "AI-core utilisation per pod", "Power per node"]
    {
        assert!(titles.contains(&needed), "panel {needed:?} missing from {titles:?}");
    }
    let variables: Vec<&str> = dashboard["templating"]["list"]
        .as_array()
        .expect("variables")
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert_eq!(variables, ["datasource", "node", "chip", "namespace"]);
    let expressions: Vec<String> = panels
        .iter()
        .flat_map(|p| p["targets"].as_array().cloned().unwrap_or_default())
        .filter_map(|t| {
            t["expr"].as_str().map(|e| e.replace("$node", ".*").replace("$chip", ".*").replace("$namespace", ".*"))
        })
        .collect();
    assert_served(&native_names(&expressions.join("\n")), "ascend-npu.json");
    // promtool parses PromQL in rule files: every panel query becomes a recording rule.
    let mut rules = String::from("groups:\n  - name: dashboard\n    rules:\n");
    for (index, expression) in expressions.iter().enumerate() {
        rules.push_str(&format!(
            "      - record: dashboard:query{index}\n        expr: {}\n",
            serde_json::to_string(expression).expect("quote")
        ));
    }
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("dashboard_rules.yaml"), rules).expect("write");
    let (ok, output) = promtool(&["check", "rules", "dashboard_rules.yaml"], dir.path());
    assert!(ok, "a dashboard query does not parse: {output}");
}

#[test]
fn example_web_config_is_valid_and_its_hash_matches_its_comment() {
    let dir = deploy().join("prometheus");
    let text = std::fs::read_to_string(dir.join("web-config.example.yaml")).expect("read example");
    let config = WebConfig::parse(&text, &dir, "web-config.example.yaml").expect("example is valid");
    assert!(config.tls.is_some());
    let hash = config.basic_auth_users.get("prometheus").expect("user prometheus");
    assert!(bcrypt::verify("change-me", hash).expect("bcrypt hash"), "the comment names the password");
}
