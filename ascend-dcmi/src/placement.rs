//! Where a chip sits in the cluster's network: the IP address of its RoCE port (`dcmi_get_device_ip`, 910 family)
//! and its super-pod placement (`dcmi_get_device_info` main command 12, sub command 1: `struct dcmi_spod_info`, A3
//! and Ascend950). Collective-communication rank tables name chips by these, and Huawei's device plugin publishes
//! them on the Node (mind-cluster `component/ascend-device-plugin/pkg/device/ascendcommon.go`, `getDcmiDeviceIP`;
//! `pkg/server/manager.go`, `getSuperPodInfo`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use dcmi_sys as sys;

use crate::chip::Chip;
use crate::chip_view::ChipView;
use crate::error::Result;

/// `main_cmd` 12 ("chip info"), which the header's enum lacks.
const MAIN_CMD_CHIP_INFO: u32 = 12;
/// Its sub command for `struct dcmi_spod_info`.
const SUB_CMD_SUPER_POD: u32 = 1;

/// A chip's place in a super-pod (`struct dcmi_spod_info`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SuperPodInfo {
    /// The chip's super-device id (SDID), unique in its super-pod.
    pub sdid: u32,
    /// The super-pod's scale type.
    pub scale_type: u32,
    /// The super-pod's id.
    pub super_pod_id: u32,
    /// The server's index in the super-pod.
    pub server_id: u32,
    /// The chassis (rack on Ascend950).
    pub chassis_id: u32,
    /// The super-pod's type (Ascend950).
    pub super_pod_type: u32,
}

impl ChipView<'_> {
    pub(crate) fn super_pod_info(self) -> Result<SuperPodInfo> {
        let raw = self.dcmi.library().device_info(
            self.target(),
            MAIN_CMD_CHIP_INFO,
            SUB_CMD_SUPER_POD,
            sys::dcmi_spod_info::default(),
        )?;
        Ok(SuperPodInfo {
            sdid: raw.sdid,
            scale_type: raw.scale_type,
            super_pod_id: raw.super_pod_id,
            server_id: raw.server_id,
            chassis_id: raw.chassis_id,
            super_pod_type: raw.super_pod_type,
        })
    }

    /// IPv4 first; IPv6 where the driver has no IPv4 address, as Huawei's plugin asks.
    pub(crate) fn roce_ip(self) -> Result<IpAddr> {
        let library = self.dcmi.library();
        let target = self.target();
        match library.device_ip(target, sys::dcmi_ip_addr_type::DCMI_IPADDR_TYPE_V4) {
            Ok((bytes, kind)) => Ok(decode(bytes, kind)),
            Err(v4_error) => match library.device_ip(target, sys::dcmi_ip_addr_type::DCMI_IPADDR_TYPE_V6) {
                Ok((bytes, kind)) => Ok(decode(bytes, kind)),
                Err(_) => Err(v4_error),
            },
        }
    }
}

/// The address the driver wrote, by the type it reports (IPv6 only when it says so).
fn decode(bytes: [u8; 16], kind: u32) -> IpAddr {
    if kind == sys::dcmi_ip_addr_type::DCMI_IPADDR_TYPE_V6.0 {
        IpAddr::V6(Ipv6Addr::from(bytes))
    } else {
        IpAddr::V4(Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3]))
    }
}

impl Chip {
    /// The chip's place in a super-pod (A3, Ascend950).
    ///
    /// # Errors
    /// [`crate::Error::NotSupported`] on chips outside super-pod products, or any DCMI error.
    #[doc(alias = "dcmi_get_device_info")]
    #[doc(alias = "dcmiv2_get_device_info")]
    pub fn super_pod_info(&self) -> Result<SuperPodInfo> {
        self.view().super_pod_info()
    }

    /// The IP address of the chip's RoCE port 0 (910 family): IPv4, else IPv6.
    ///
    /// # Errors
    /// [`crate::Error::NotSupported`] on chips without a RoCE port or without an address, the IPv4 query's DCMI
    /// error when neither query answers, [`crate::Error::UnavailableOnApi`] on the V2 API.
    #[doc(alias = "dcmi_get_device_ip")]
    pub fn roce_ip(&self) -> Result<IpAddr> {
        self.view().roce_ip()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_decode_by_the_type_the_driver_reports() {
        let mut bytes = [0u8; 16];
        bytes[..4].copy_from_slice(&[192, 168, 100, 10]);
        assert_eq!(decode(bytes, 0), "192.168.100.10".parse::<IpAddr>().unwrap());
        let v6: Ipv6Addr = "fd00::a".parse().unwrap();
        assert_eq!(decode(v6.octets(), 1), IpAddr::V6(v6));
    }
}
