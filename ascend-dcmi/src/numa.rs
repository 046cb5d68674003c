//! A chip's NUMA node: from its affine CPU list and the kernel's node CPU lists, or from its PCIe device.
//!
//! The node whose `cpulist` shares the most CPUs with the chip's affinity list wins (the lowest node on a tie).
//! Without an affinity list, or when no node matches, `/sys/bus/pci/devices/<bdf>/numa_node` is read (`-1` there
//! means the platform does not say). Both paths are read under the host root when there is one.

use std::fs;
use std::path::Path;

use crate::discovery::under_root;
use crate::identity::PcieAddress;

/// An inclusive CPU range.
type CpuRange = (u32, u32);

/// Parses a Linux cpulist such as `0-23,48-71` or `5`. `None` if any part is malformed.
pub(crate) fn parse_cpulist(text: &str) -> Option<Vec<CpuRange>> {
    let text = text.trim();
    if text.is_empty() {
        return Some(Vec::new());
    }
    text.split(',')
        .map(|part| {
            let part = part.trim();
            match part.split_once('-') {
                Some((first, last)) => {
                    let (first, last) = (first.trim().parse().ok()?, last.trim().parse().ok()?);
                    (first <= last).then_some((first, last))
                }
                None => part.parse().ok().map(|cpu| (cpu, cpu)),
            }
        })
        .collect()
}

/// How many CPUs two range lists share.
pub(crate) fn overlap(a: &[CpuRange], b: &[CpuRange]) -> u64 {
    let mut shared = 0;
    for (a_first, a_last) in a {
        for (b_first, b_last) in b {
            let first = (*a_first).max(*b_first);
            let last = (*a_last).min(*b_last);
            if first <= last {
                shared += u64::from(last - first) + 1;
            }
        }
    }
    shared
}

/// The NUMA node of a chip; `None` if neither source says.
pub(crate) fn numa_node(host_root: Option<&Path>, affinity: Option<&str>, pcie: Option<PcieAddress>) -> Option<u32> {
    affinity
        .and_then(parse_cpulist)
        .filter(|ranges| !ranges.is_empty())
        .and_then(|ranges| node_by_cpus(host_root, &ranges))
        .or_else(|| pcie.and_then(|address| node_by_pcie(host_root, address)))
}

fn node_by_cpus(host_root: Option<&Path>, affinity: &[CpuRange]) -> Option<u32> {
    let nodes_dir = under_root(host_root, Path::new("/sys/devices/system/node"));
    let mut best: Option<(u64, u32)> = None;
    for entry in fs::read_dir(nodes_dir).ok()?.flatten() {
        let name = entry.file_name();
        let Some(node) = name.to_str().and_then(|n| n.strip_prefix("node")).and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Some(cpus) = fs::read_to_string(entry.path().join("cpulist")).ok().and_then(|t| parse_cpulist(&t)) else {
            continue;
        };
        let shared = overlap(affinity, &cpus);
        let better = match best {
            None => shared > 0,
            Some((best_shared, best_node)) => shared > best_shared || (shared == best_shared && node < best_node),
        };
        if better && shared > 0 {
            best = Some((shared, node));
        }
    }
    best.map(|(_, node)| node)
}

fn node_by_pcie(host_root: Option<&Path>, address: PcieAddress) -> Option<u32> {
    let path = under_root(host_root, &Path::new("/sys/bus/pci/devices").join(address.to_string()).join("numa_node"));
    let value: i64 = fs::read_to_string(path).ok()?.trim().parse().ok()?;
    u32::try_from(value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, relative: &str, content: &str) {
        let path = root.join(relative);
        fs::create_dir_all(path.parent().expect("has a parent")).expect("create dirs");
        fs::write(path, content).expect("write");
    }

    #[test]
    fn cpulists_parse() {
        assert_eq!(parse_cpulist("0-23,48-71\n"), Some(vec![(0, 23), (48, 71)]));
        assert_eq!(parse_cpulist("5"), Some(vec![(5, 5)]));
        assert_eq!(parse_cpulist(""), Some(vec![]));
        assert_eq!(parse_cpulist("3-1"), None);
        assert_eq!(parse_cpulist("a-b"), None);
    }

    #[test]
    fn node_with_most_shared_cpus_wins_then_pcie_fallback() {
        let root = tempfile::tempdir().expect("temporary directory");
        write(root.path(), "sys/devices/system/node/node0/cpulist", "0-23,96-119\n");
        write(root.path(), "sys/devices/system/node/node1/cpulist", "24-47,120-143\n");
        write(root.path(), "sys/devices/system/node/possible", "0-1\n");
        write(root.path(), "sys/bus/pci/devices/0000:c1:00.0/numa_node", "3\n");
        write(root.path(), "sys/bus/pci/devices/0000:c2:00.0/numa_node", "-1\n");
        let pcie: PcieAddress = "0000:c1:00.0".parse().expect("address");
        let unknown: PcieAddress = "0000:c2:00.0".parse().expect("address");
        let root = Some(root.path());
        assert_eq!(numa_node(root, Some("24-47"), Some(pcie)), Some(1));
        assert_eq!(numa_node(root, Some("20-30"), None), Some(1), "7 CPUs shared with node1, 4 with node0");
        assert_eq!(numa_node(root, Some("22-25"), None), Some(0), "a tie goes to the lower node");
        assert_eq!(numa_node(root, Some("200-210"), Some(pcie)), Some(3), "no node matches: PCIe fallback");
        assert_eq!(numa_node(root, None, Some(pcie)), Some(3));
        assert_eq!(numa_node(root, None, Some(unknown)), None, "-1 means unknown");
        assert_eq!(numa_node(root, None, None), None);
    }
}
