//! The doctor's words in every language it speaks: each check's title, and each finding's fix, keyed by stable
//! identifiers (the check ids, and a finding id `<check id>.<finding>` per kind of fix), in English and in Simplified
//! Chinese.
//!
//! A plain Rust match per message, not a message-format crate (Fluent and gettext were weighed): the fixes insert
//! parameters (paths, versions, commands, manifests) that must reach the operator unchanged, and a match whose arms
//! each return the pair `(English, Chinese)` makes a missing translation a compile error, checks every parameter's
//! type, and needs no catalogue files to ship or load. The English texts are the doctor's stable ones (the JSON's
//! `fix`); the Chinese follow the vocabulary of Huawei's Ascend documentation (昇腾, 驱动, 固件, 设备插件, 容器运行时,
//! 节点). Commands, paths, flags and field names are never translated.

use ascend_cli::Lang;

/// A fix in both languages, with the ids of the findings it answers (`driver.loaded.missing`), stable across
/// releases and languages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    /// The finding ids, in the order their texts appear.
    pub ids: Vec<String>,
    /// The English text.
    pub en: String,
    /// The Simplified Chinese text.
    pub zh_cn: String,
}

impl Fix {
    /// The text in `lang`.
    pub fn text(&self, lang: Lang) -> &str {
        lang.pick(&self.en, &self.zh_cn)
    }

    /// Several fixes as one: the texts joined with `separator` (`"; "` becomes `"；"` in Chinese), the ids in order.
    pub fn join(fixes: impl IntoIterator<Item = Fix>, separator: &str) -> Fix {
        let zh_separator = if separator == "; " { "；" } else { separator };
        let fixes: Vec<Fix> = fixes.into_iter().collect();
        Fix {
            ids: fixes.iter().flat_map(|fix| fix.ids.iter().cloned()).collect(),
            en: fixes.iter().map(|fix| fix.en.as_str()).collect::<Vec<_>>().join(separator),
            zh_cn: fixes.iter().map(|fix| fix.zh_cn.as_str()).collect::<Vec<_>>().join(zh_separator),
        }
    }

    /// The same fix after `label: ` (an installation's name, in both languages).
    #[must_use]
    pub fn labelled(self, label: &str) -> Fix {
        Fix { ids: self.ids, en: format!("{label}: {}", self.en), zh_cn: format!("{label}：{}", self.zh_cn) }
    }
}

impl From<Advice> for Fix {
    fn from(advice: Advice) -> Fix {
        let (en, zh_cn) = advice.texts();
        Fix { ids: vec![advice.id().to_owned()], en, zh_cn }
    }
}

/// The title of each check, by check id: `(English, Chinese)`. `None` for an id the doctor does not have.
pub fn title(id: &str) -> Option<(&'static str, &'static str)> {
    Some(match id {
        "driver.pci_devices" => ("Huawei NPU PCI devices present", "存在华为 NPU PCI 设备"),
        "driver.kernel_headers" => ("Kernel headers match `uname -r`", "内核头文件与 `uname -r` 一致"),
        "driver.secure_boot" => ("Secure Boot does not block the driver", "安全启动（Secure Boot）不阻止驱动加载"),
        "driver.loaded" => ("Driver kernel modules loaded", "驱动内核模块已加载"),
        "driver.device_nodes" => ("Device nodes /dev/davinci* present", "设备节点 /dev/davinci* 存在"),
        "driver.libdcmi" => ("libdcmi.so found and safe to load", "找到 libdcmi.so 且可安全加载"),
        "driver.dcmi_init" => ("DCMI initialises", "DCMI 初始化成功"),
        "driver.chips_healthy" => ("Every chip healthy", "所有芯片健康"),
        "driver.firmware" => ("Firmware matches the driver", "固件与驱动配套"),
        "driver.chip_firmware" => ("Every chip's firmware matches the driver", "每个芯片运行的固件与驱动配套"),
        "versions.driver" => ("Driver version readable", "驱动版本可读取"),
        "versions.cann_host" => ("Host CANN matches the driver", "主机上的 CANN 与驱动配套"),
        "versions.cann_image" => ("Image CANN matches the driver", "镜像中的 CANN 与驱动配套"),
        "container_runtime.docker" => ("Docker has the Ascend runtime", "Docker 已注册昇腾容器运行时"),
        "container_runtime.containerd" => ("containerd has the Ascend runtime", "containerd 已注册昇腾容器运行时"),
        "container_runtime.runtime_class" => {
            ("RuntimeClass handler matches the registered runtime", "RuntimeClass 的 handler 与已注册的运行时一致")
        }
        "container_runtime.cdi" => ("CDI spec present and current", "CDI 规格文件存在且为最新"),
        "container_runtime.cdi_engine" => ("Container engine loads CDI devices", "容器引擎可加载 CDI 设备"),
        "container_runtime.cdi_version" => ("CDI spec version readable by the engine", "容器引擎可读取 CDI 规格版本"),
        "kubernetes.kubelet_socket" => ("kubelet registration socket present", "kubelet 注册套接字存在"),
        "kubernetes.kubelet_version" => ("kubelet version supported", "kubelet 版本受支持"),
        "kubernetes.cdi_devices_gate" => {
            ("kubelet passes the device plugin's CDI devices on", "kubelet 向容器运行时传递设备插件的 CDI 设备")
        }
        "kubernetes.dra_api" => (
            "API server serves the DRA driver's resource.k8s.io/v1",
            "API Server 提供 DRA 驱动所需的 resource.k8s.io/v1",
        ),
        "kubernetes.device_plugin" => ("Device plugin socket present and registered", "设备插件套接字存在且已注册"),
        "kubernetes.node_resources" => ("Node advertises the NPU resource", "节点上报 NPU 资源"),
        "kubernetes.stale_allocations" => ("No NPUs allocated to deleted pods", "没有分配给已删除 Pod 的 NPU"),
        "kubernetes.migration" => ("No migration left half-done", "没有只完成一半的迁移"),
        "kubernetes.held_out_chips" => ("No NPU held out after failed resets", "没有因复位无效而停止服务的 NPU"),
        _ => return None,
    })
}

const DRIVER_INSTALL_EN: &str =
    "install the Ascend driver and firmware (Ascend-hdk-<chip>-npu-driver_<version>_linux-<arch>.run \
     --full, then the firmware .run) and reboot: npu-smi shows no cards until the reboot; install logs are under \
     /var/log/ascend_seclog/";
const DRIVER_INSTALL_ZH: &str =
    "安装昇腾驱动和固件（先执行 Ascend-hdk-<chip>-npu-driver_<version>_linux-<arch>.run --full，\
     再执行固件的 .run 包）并重启：重启前 npu-smi 看不到任何卡；安装日志位于 /var/log/ascend_seclog/";

/// How a chip recovery held out comes back.
const OFFERED_AGAIN_EN: &str = "the chip is offered again once it reads healthy";
const OFFERED_AGAIN_ZH: &str = "芯片恢复健康后会重新上报";

/// What the runtime prints when a pairing is wrong (`package_compatibility::MISMATCH_SYMPTOMS` is this text).
pub(crate) const MISMATCH_EN: &str =
    "a mismatch shows as `aclrtSetDevice failed, error code: 10070`, `E10004` or \"toolkit version mismatch\"";
const MISMATCH_ZH: &str =
    "版本不配套时会报 `aclrtSetDevice failed, error code: 10070`、`E10004` 或 \"toolkit version mismatch\"";

const PLUGIN_EN: &str = "check the device plugin DaemonSet: its pod must run on this node (privileged, with hostPath \
     mounts of /var/lib/kubelet/device-plugins, /dev, /sys and /usr/local/Ascend/driver, and a Pod Security level \
     that allows them); its log must say \"Registered device plugin with kubelet\" — a failure there usually means \
     wrong permissions on the socket directory";
const PLUGIN_ZH: &str = "检查设备插件的 DaemonSet：其 Pod 必须运行在本节点上（特权模式，以 hostPath 挂载 \
     /var/lib/kubelet/device-plugins、/dev、/sys 和 /usr/local/Ascend/driver，且 Pod Security 级别允许这些挂载）；\
     其日志中必须出现 \"Registered device plugin with kubelet\"，若此处失败，通常是套接字目录的权限不对";

const NO_CLUSTER_EN: &str = "run the doctor where the API server is configured (in a pod with a service \
     account, or with KUBECONFIG) with read access to nodes, pods and runtimeclasses to run this check";
const NO_CLUSTER_ZH: &str = "在已配置 API Server 的环境中运行 doctor（在带 ServiceAccount 的 Pod 中，或设置 \
     KUBECONFIG），并授予 nodes、pods 和 runtimeclasses 的读权限，才能执行此检查";

const RESTART_EN: &str = "restarting the engine kills the node's containers: drain the node first, and roll \
     the change out in batches";
const RESTART_ZH: &str = "重启容器引擎会终止节点上的所有容器：请先排空（drain）节点，并分批滚动变更";

const ANNOTATIONS_EN: &str =
    "or run the device plugin with `--cdi-delivery annotations`, which every kubelet passes on";
const ANNOTATIONS_ZH: &str = "或以 `--cdi-delivery annotations` 运行设备插件，所有版本的 kubelet 都会传递该方式";

const DRA_UPGRADE_EN: &str =
    "upgrade the control plane to Kubernetes 1.34 or newer (resource.k8s.io/v1, on by default), \
     then the kubelets; until then serve NPUs with the device plugin";
const DRA_UPGRADE_ZH: &str =
    "将控制面升级到 Kubernetes 1.34 或更高版本（默认开启 resource.k8s.io/v1），再升级各节点的 \
     kubelet；在此之前请用设备插件提供 NPU";

/// Every kind of fix the doctor gives, with its parameters (inserted unchanged in both languages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Advice {
    /// No Ascend card on the PCI bus.
    PciNoCards,
    /// No headers for the running kernel.
    KernelHeaders { release: String },
    /// The driver is not loaded.
    DriverNotLoaded,
    /// Secure Boot refuses the unsigned driver.
    SecureBoot,
    /// Device nodes missing.
    DeviceNodesMissing,
    /// Device nodes that are not character devices.
    DeviceNodesNotChar,
    /// libdcmi.so not found.
    LibdcmiMissing,
    /// libdcmi.so not a regular file.
    LibdcmiNotRegular,
    /// libdcmi.so writable by others than root.
    LibdcmiOwnership { commands: String },
    /// dcmi_init failed.
    DcmiInitFailed,
    /// The driver serves the wrong DCMI family for the cards.
    ApiFamily { expected: String },
    /// The driver cannot list its chips.
    ChipsUnlisted,
    /// The driver reports no chips.
    NoChips,
    /// Unhealthy chips, with the reset command of each.
    ChipsUnhealthy { resets: String },
    /// The firmware's version.info is missing.
    FirmwareUnknown,
    /// The firmware's version.info is damaged.
    FirmwareDamaged,
    /// The site table pairs the driver with other firmware.
    TableFirmware { driver: String, firmware: String },
    /// Chips run another firmware than the installed package (`chips`: `NPU 0, 1`; `several`: more than one).
    FirmwareNotActivated { chips: String, several: bool, reported: String },
    /// Firmware older than any DCMI accepts (`chips`: `None` for the package's firmware).
    FirmwareTooOld { chips: Option<String>, driver: String },
    /// The driver declares no firmware range.
    DriverLacksFirmwareRange,
    /// Firmware newer than the driver's ranges.
    FirmwareNewer { chips: Option<String>, hdk: Option<String>, declared: String, driver: String },
    /// Firmware older than the driver's ranges.
    FirmwareOlder { chips: Option<String>, declared: String, driver: String },
    /// The driver lacks an interface a CANN needs.
    InterfaceMissing { interface: String, cann: String },
    /// The driver's interface version is older than a CANN needs.
    InterfaceTooOld { driver_key: String, required: String, cann_version: String, has: String },
    /// Only the CANN lists the driver's line.
    InnerLineOneSided { listed: String, line: String },
    /// Neither lists the other's line.
    InnerLineMissing { listed: String, line: String },
    /// The driver is not installed.
    DriverNotInstalled,
    /// The driver's version.info cannot be read.
    DriverUnreadable,
    /// The driver's version.info has no Version.
    DriverNoVersion,
    /// The driver's version.info has damaged lines.
    DriverDamagedLines,
    /// A CANN file is damaged.
    CannFileDamaged { package: String, file: String },
    /// A CANN installation that does not fit but is not in use.
    CannNotInUse { label: String, latest: Option<String> },
    /// Pin CANN in the image build.
    PinImageCann,
    /// The site table has no row for the driver.
    TableNoRow { driver: String, table: String },
    /// The site table pairs the driver with other CANN.
    TableCann { driver: String, supported: String },
    /// A pod's container cannot be checked here.
    PodNotChecked,
    /// No image given.
    NoImage,
    /// No CANN under --image-root.
    ImageRootNoCann,
    /// No CANN in the pod's container.
    ContainerNoCann,
    /// A chip that does not report its firmware.
    ChipFirmwareUnknown,
    /// The Ascend runtime is not registered with an engine.
    RegisterRuntime { engine: String },
    /// The registered runtime's binary is missing.
    RuntimeBinaryMissing { missing: String, engine: String },
    /// daemon.json does not parse.
    DockerConfigBroken,
    /// Neither Docker nor containerd is configured.
    NoEngineConfigured,
    /// config.toml does not parse.
    ContainerdConfigBroken,
    /// RuntimeClasses unavailable: no cluster and no manifest.
    RuntimeClassNoCluster,
    /// RuntimeClasses not listed.
    RuntimeClassAccess,
    /// No RuntimeClass selects the Ascend runtime.
    RuntimeClassMissing { registered: String, manifest: String },
    /// A RuntimeClass's handler differs from the registered runtime.
    RuntimeClassHandler { first: String, registered: String, manifest: String },
    /// A CDI spec that does not load.
    CdiSpecBroken,
    /// No CDI spec.
    CdiSpecMissing,
    /// The CDI spec lists other chips than the node has.
    CdiSpecStale { kind: String },
    /// An engine does not read the spec's directory.
    CdiSpecDir { dir: String, engine: String },
    /// containerd's CDI is off.
    CdiOffContainerd { plugin_key: String, config: String, spec_dirs: String },
    /// Docker's CDI is off.
    CdiOffDocker { config: String },
    /// The engine's release predates CDI.
    CdiUnsupported { engine: String, floor: String },
    /// Why CDI matters and what a restart costs (ends `container_runtime.cdi_engine`'s fix).
    CdiEngineRestart,
    /// An engine does not (or may not) read the spec's cdiVersion.
    CdiVersion { engine_label: String, declared: String, known_limit: bool, lowest: String, engine: String },
    /// No kubelet version found.
    KubeletVersionUnknown,
    /// The kubelet is older than a required floor.
    KubeletTooOld { floor: String, feature: String, version: String },
    /// The kubelet predates the CDI devices gate.
    KubeletPredatesCdiGate,
    /// The CDI devices gate is off.
    CdiGateOff { gate: String, config: String },
    /// API discovery not readable.
    DraDiscoveryAccess,
    /// The API server does not serve the DRA driver's version.
    DraUpgrade,
    /// The kubelet's socket is not a socket.
    KubeletSocketNotSocket,
    /// The kubelet's socket is absent.
    KubeletSocketAbsent,
    /// The device plugin has not registered.
    PluginNotRegistered,
    /// No API server configured.
    NoCluster,
    /// The node name is unknown.
    NodeNameUnknown,
    /// The Node object cannot be read.
    NodeAccess,
    /// No NPU in the Node's capacity.
    CapacityMissing,
    /// Allocatable below capacity.
    AllocatableShort,
    /// Pods cannot be listed.
    PodsAccess,
    /// Allocations of pods that are gone.
    StaleAllocations,
    /// Both device plugins serve the node (`resources`: the resources both serve, or "the node's NPUs").
    MigrationTwoPlugins { resources: String },
    /// Huawei's runtime registered beside ours (`huawei`: its registrations).
    MigrationTwoRuntimes { huawei: String },
    /// Both exporters run.
    MigrationTwoExporters,
    /// Parts of both stacks without a pair (`huawei`, `ours`: the parts of each).
    MigrationMixed { huawei: String, ours: String },
    /// The node's Events cannot be listed.
    EventsAccess,
    /// Recovery held these chips out: their reset failed.
    HeldOutResetFailed { chips: String },
    /// Recovery held these chips out: they used their resets.
    HeldOutBudgetUsed { chips: String },
    /// Recovery held these chips out: the fault returned after a reset.
    HeldOutFaultReturned { chips: String },
    /// Recovery held these chips out for a reason in other words.
    HeldOut { chips: String },
}

/// `the firmware` / `the firmware of NPU 3`, in both languages.
fn whose_firmware(chips: &Option<String>) -> (String, String) {
    match chips {
        None => ("the firmware".to_owned(), "固件".to_owned()),
        Some(chips) => (format!("the firmware of {chips}"), format!("{chips} 的固件")),
    }
}

impl Advice {
    /// The stable finding id, `<check id>.<finding>`.
    pub fn id(&self) -> &'static str {
        match self {
            Advice::PciNoCards => "driver.pci_devices.no_cards",
            Advice::KernelHeaders { .. } => "driver.kernel_headers.missing",
            Advice::DriverNotLoaded => "driver.loaded.not_loaded",
            Advice::SecureBoot => "driver.secure_boot.blocks_driver",
            Advice::DeviceNodesMissing => "driver.device_nodes.missing",
            Advice::DeviceNodesNotChar => "driver.device_nodes.not_character_devices",
            Advice::LibdcmiMissing => "driver.libdcmi.not_found",
            Advice::LibdcmiNotRegular => "driver.libdcmi.not_regular_file",
            Advice::LibdcmiOwnership { .. } => "driver.libdcmi.unsafe_ownership",
            Advice::DcmiInitFailed => "driver.dcmi_init.failed",
            Advice::ApiFamily { .. } => "driver.dcmi_init.wrong_api_family",
            Advice::ChipsUnlisted => "driver.chips_healthy.list_failed",
            Advice::NoChips => "driver.chips_healthy.no_chips",
            Advice::ChipsUnhealthy { .. } => "driver.chips_healthy.unhealthy",
            Advice::FirmwareUnknown => "driver.firmware.version_unknown",
            Advice::FirmwareDamaged => "driver.firmware.version_info_damaged",
            Advice::TableFirmware { .. } => "driver.firmware.site_table_mismatch",
            Advice::FirmwareNotActivated { .. } => "driver.chip_firmware.not_activated",
            Advice::FirmwareTooOld { .. } => "driver.firmware.older_than_dcmi_accepts",
            Advice::DriverLacksFirmwareRange => "driver.firmware.driver_declares_no_range",
            Advice::FirmwareNewer { .. } => "driver.firmware.newer_than_driver",
            Advice::FirmwareOlder { .. } => "driver.firmware.older_than_driver",
            Advice::InterfaceMissing { .. } => "versions.cann.driver_interface_missing",
            Advice::InterfaceTooOld { .. } => "versions.cann.driver_interface_too_old",
            Advice::InnerLineOneSided { .. } => "versions.cann.inner_version_one_sided",
            Advice::InnerLineMissing { .. } => "versions.cann.inner_version_not_listed",
            Advice::DriverNotInstalled => "versions.driver.not_installed",
            Advice::DriverUnreadable => "versions.driver.unreadable",
            Advice::DriverNoVersion => "versions.driver.no_version",
            Advice::DriverDamagedLines => "versions.driver.damaged_lines",
            Advice::CannFileDamaged { .. } => "versions.cann.file_damaged",
            Advice::CannNotInUse { .. } => "versions.cann.unused_installation_mismatch",
            Advice::PinImageCann => "versions.cann_image.pin_cann",
            Advice::TableNoRow { .. } => "versions.cann.site_table_no_row",
            Advice::TableCann { .. } => "versions.cann.site_table_mismatch",
            Advice::PodNotChecked => "versions.cann_image.pod_not_checked",
            Advice::NoImage => "versions.cann_image.no_image",
            Advice::ImageRootNoCann => "versions.cann_image.image_root_without_cann",
            Advice::ContainerNoCann => "versions.cann_image.container_without_cann",
            Advice::ChipFirmwareUnknown => "driver.chip_firmware.not_reported",
            Advice::RegisterRuntime { .. } => "container_runtime.engine.runtime_not_registered",
            Advice::RuntimeBinaryMissing { .. } => "container_runtime.engine.runtime_binary_missing",
            Advice::DockerConfigBroken => "container_runtime.docker.config_invalid",
            Advice::NoEngineConfigured => "container_runtime.containerd.no_engine_configured",
            Advice::ContainerdConfigBroken => "container_runtime.containerd.config_invalid",
            Advice::RuntimeClassNoCluster => "container_runtime.runtime_class.no_cluster",
            Advice::RuntimeClassAccess => "container_runtime.runtime_class.list_failed",
            Advice::RuntimeClassMissing { .. } => "container_runtime.runtime_class.missing",
            Advice::RuntimeClassHandler { .. } => "container_runtime.runtime_class.handler_mismatch",
            Advice::CdiSpecBroken => "container_runtime.cdi.spec_invalid",
            Advice::CdiSpecMissing => "container_runtime.cdi.no_spec",
            Advice::CdiSpecStale { .. } => "container_runtime.cdi.spec_stale",
            Advice::CdiSpecDir { .. } => "container_runtime.cdi_engine.spec_dir_not_read",
            Advice::CdiOffContainerd { .. } => "container_runtime.cdi_engine.containerd_cdi_off",
            Advice::CdiOffDocker { .. } => "container_runtime.cdi_engine.docker_cdi_off",
            Advice::CdiUnsupported { .. } => "container_runtime.cdi_engine.release_without_cdi",
            Advice::CdiEngineRestart => "container_runtime.cdi_engine.restart_needed",
            Advice::CdiVersion { .. } => "container_runtime.cdi_version.unreadable",
            Advice::KubeletVersionUnknown => "kubernetes.kubelet_version.unknown",
            Advice::KubeletTooOld { .. } => "kubernetes.kubelet_version.too_old",
            Advice::KubeletPredatesCdiGate => "kubernetes.cdi_devices_gate.kubelet_too_old",
            Advice::CdiGateOff { .. } => "kubernetes.cdi_devices_gate.off",
            Advice::DraDiscoveryAccess => "kubernetes.dra_api.discovery_failed",
            Advice::DraUpgrade => "kubernetes.dra_api.v1_not_served",
            Advice::KubeletSocketNotSocket => "kubernetes.kubelet_socket.not_socket",
            Advice::KubeletSocketAbsent => "kubernetes.kubelet_socket.absent",
            Advice::PluginNotRegistered => "kubernetes.device_plugin.not_registered",
            Advice::NoCluster => "kubernetes.no_cluster",
            Advice::NodeNameUnknown => "kubernetes.node_resources.node_name_unknown",
            Advice::NodeAccess => "kubernetes.node_resources.node_not_read",
            Advice::CapacityMissing => "kubernetes.node_resources.capacity_missing",
            Advice::AllocatableShort => "kubernetes.node_resources.allocatable_short",
            Advice::PodsAccess => "kubernetes.stale_allocations.pods_not_listed",
            Advice::StaleAllocations => "kubernetes.stale_allocations.stale",
            Advice::MigrationTwoPlugins { .. } => "kubernetes.migration.two_device_plugins",
            Advice::MigrationTwoRuntimes { .. } => "kubernetes.migration.two_runtimes",
            Advice::MigrationTwoExporters => "kubernetes.migration.two_exporters",
            Advice::MigrationMixed { .. } => "kubernetes.migration.mixed",
            Advice::EventsAccess => "kubernetes.held_out_chips.events_not_listed",
            Advice::HeldOutResetFailed { .. } => "kubernetes.held_out_chips.reset_failed",
            Advice::HeldOutBudgetUsed { .. } => "kubernetes.held_out_chips.budget_used",
            Advice::HeldOutFaultReturned { .. } => "kubernetes.held_out_chips.fault_returned",
            Advice::HeldOut { .. } => "kubernetes.held_out_chips.held_out",
        }
    }

    /// The fix as `(English, Chinese)`.
    pub fn texts(&self) -> (String, String) {
        match self {
            Advice::PciNoCards => (
                "the kernel does not see any Ascend card: check that it is seated and powered, that the slot is \
                 enabled in the BIOS, and `lspci -d 19e5:`; a card missing there is a hardware or BIOS problem, not a \
                 driver one"
                    .to_owned(),
                "内核看不到任何昇腾卡：请检查卡是否插好并已上电、BIOS 中是否启用了该插槽，并执行 `lspci -d 19e5:`；\
                 若其中也没有该卡，则是硬件或 BIOS 问题，而非驱动问题"
                    .to_owned(),
            ),
            Advice::KernelHeaders { release } => (
                format!(
                    "install the headers of the running kernel: `apt-get install linux-headers-{release}` \
                     (Debian/Ubuntu) or `yum install kernel-devel-{release}` (openEuler/CentOS), or boot the kernel \
                     the installed headers belong to; a security-patched kernel without matching headers makes the \
                     driver's module build fail (\"kernel module build failed\")"
                ),
                format!(
                    "安装当前运行内核的头文件：`apt-get install linux-headers-{release}`（Debian/Ubuntu）或 \
                     `yum install kernel-devel-{release}`（openEuler/CentOS），或者启动到已安装头文件所对应的内核；\
                     打过安全补丁但没有匹配头文件的内核会导致驱动模块编译失败（\"kernel module build failed\"）"
                ),
            ),
            Advice::DriverNotLoaded => (DRIVER_INSTALL_EN.to_owned(), DRIVER_INSTALL_ZH.to_owned()),
            Advice::SecureBoot => (
                "disable Secure Boot in the firmware setup, or enroll the key the driver modules are signed with \
                 (`mokutil --import <key.der>`, then confirm at the next boot)"
                    .to_owned(),
                "在 BIOS/UEFI 设置中关闭安全启动（Secure Boot），或导入驱动模块的签名密钥\
                 （`mokutil --import <key.der>`，并在下次启动时确认）"
                    .to_owned(),
            ),
            Advice::DeviceNodesMissing => (
                format!(
                    "the driver creates these nodes when it loads: {DRIVER_INSTALL_EN}; if `npu-smi info` works but \
                     the nodes are missing, check that nothing (udev rules, a container's /dev) hides them"
                ),
                format!(
                    "这些设备节点由驱动在加载时创建：{DRIVER_INSTALL_ZH}；若 `npu-smi info` 正常但节点缺失，\
                     请检查是否有其他因素（udev 规则、容器自己的 /dev）将其隐藏"
                ),
            ),
            Advice::DeviceNodesNotChar => (
                "these must be the driver's character devices; remove whatever replaced them and reload the driver \
                 (reboot)"
                    .to_owned(),
                "这些必须是驱动创建的字符设备；请删除替换了它们的文件，然后重新加载驱动（重启）".to_owned(),
            ),
            Advice::LibdcmiMissing => (
                format!("libdcmi.so comes with the driver package: {DRIVER_INSTALL_EN}"),
                format!("libdcmi.so 随驱动包安装：{DRIVER_INSTALL_ZH}"),
            ),
            Advice::LibdcmiNotRegular => (
                "reinstall the driver package; the library must be a regular file".to_owned(),
                "重新安装驱动包；该库必须是普通文件".to_owned(),
            ),
            Advice::LibdcmiOwnership { commands } => (
                format!(
                    "the vendor's tools and ascend-dcmi refuse a libdcmi.so that anyone but root could replace (it \
                     runs as root in every agent); run: {commands}"
                ),
                format!(
                    "厂商工具和 ascend-dcmi 都拒绝加载 root 以外的用户可以替换的 libdcmi.so（各组件均以 root 身份加载它）；\
                     请执行：{commands}"
                ),
            ),
            Advice::DcmiInitFailed => (
                "dcmi_init fails when the driver is not loaded or the device nodes are missing (see the checks \
                 above), right after an install that needs a reboot, or when the driver and firmware do not match; \
                 check /var/log/ascend_seclog/ and `dmesg | grep -i davinci`"
                    .to_owned(),
                "驱动未加载或设备节点缺失（见上面的检查）、安装后尚未重启、或驱动与固件不配套时，dcmi_init 都会失败；\
                 请查看 /var/log/ascend_seclog/ 和 `dmesg | grep -i davinci`"
                    .to_owned(),
            ),
            Advice::ApiFamily { expected } => (
                format!("install the driver package built for these cards (it serves {expected}): {DRIVER_INSTALL_EN}"),
                format!("安装为这些卡构建的驱动包（它提供 {expected}）：{DRIVER_INSTALL_ZH}"),
            ),
            Advice::ChipsUnlisted => (
                "the driver cannot list its chips: reboot the node; if it persists, collect /var/log/ascend and \
                 contact support"
                    .to_owned(),
                "驱动无法列出芯片：请重启节点；若问题依旧，请收集 /var/log/ascend 并联系技术支持".to_owned(),
            ),
            Advice::NoChips => (
                "a freshly installed driver reports chips only after a reboot; otherwise check driver.pci_devices"
                    .to_owned(),
                "新安装的驱动需要重启后才能上报芯片；否则请查看 driver.pci_devices".to_owned(),
            ),
            Advice::ChipsUnhealthy { resets } => (
                format!(
                    "drain the chip's workloads, then reset it: {resets}; if it stays abnormal, reboot the node; logs \
                     are under /var/log/ascend; `ascend-smi health` shows each fault code with its meaning"
                ),
                format!(
                    "先迁走该芯片上的业务，再复位芯片：{resets}；若仍然异常，请重启节点；日志位于 /var/log/ascend；\
                     `ascend-smi health` 会显示每个故障码及其含义"
                ),
            ),
            Advice::FirmwareUnknown => (
                "read the firmware version with `npu-smi info -t board -i <card>` and compare it with the driver's \
                 compatible_version_fw"
                    .to_owned(),
                "用 `npu-smi info -t board -i <card>` 查询固件版本，并与驱动的 compatible_version_fw 比较".to_owned(),
            ),
            Advice::FirmwareDamaged => (
                "reinstall the firmware package: its version.info is damaged".to_owned(),
                "重新安装固件包：其 version.info 已损坏".to_owned(),
            ),
            Advice::TableFirmware { driver, firmware } => (
                format!("your table pairs driver {driver} with firmware {firmware}"),
                format!("您的兼容性表将驱动 {driver} 与固件 {firmware} 配套"),
            ),
            Advice::FirmwareNotActivated { chips, several, reported } => {
                let they = if *several { "they still run" } else { "it still runs" };
                (
                    format!(
                        "the firmware upgrade has not reached {chips}: reboot the node to activate the installed \
                         firmware; if {they} {reported} afterwards, install the firmware package again \
                         (Ascend-hdk-<chip>-npu-firmware_<version>.run --full) and reboot"
                    ),
                    format!(
                        "固件升级尚未在 {chips} 上生效：请重启节点以激活已安装的固件；若重启后仍运行 {reported}，\
                         请重新安装固件包（Ascend-hdk-<chip>-npu-firmware_<version>.run --full）并重启"
                    ),
                )
            }
            Advice::FirmwareTooOld { chips, driver } => {
                let (whose_en, whose_zh) = whose_firmware(chips);
                (
                    format!(
                        "upgrade {whose_en} to the one of driver {driver}'s HDK release \
                         (Ascend-hdk-<chip>-npu-firmware_<version>.run --full, then reboot)"
                    ),
                    format!(
                        "将{whose_zh}升级到驱动 {driver} 所属 HDK 版本中的固件\
                         （Ascend-hdk-<chip>-npu-firmware_<version>.run --full，然后重启）"
                    ),
                )
            }
            Advice::DriverLacksFirmwareRange => (
                "reinstall the driver package: its version.info lacks compatible_version_fw".to_owned(),
                "重新安装驱动包：其 version.info 缺少 compatible_version_fw".to_owned(),
            ),
            Advice::FirmwareNewer { chips, hdk, declared, driver } => {
                let (whose_en, whose_zh) = whose_firmware(chips);
                let (hdk_en, hdk_zh) = match hdk {
                    Some(hdk) => (format!(" ({hdk}, the firmware's package_version)"), format!("（{hdk}，即固件的 package_version）")),
                    None => (String::new(), String::new()),
                };
                (
                    format!(
                        "upgrade the driver to the HDK release of {whose_en}{hdk_en} \
                         (Ascend-hdk-<chip>-npu-driver_<version>_linux-<arch>.run --upgrade), or install a firmware in \
                         {declared} (the firmware of HDK {driver}), then reboot; {MISMATCH_EN}"
                    ),
                    format!(
                        "将驱动升级到{whose_zh}所属的 HDK 版本{hdk_zh}\
                         （Ascend-hdk-<chip>-npu-driver_<version>_linux-<arch>.run --upgrade），或安装 {declared} \
                         范围内的固件（HDK {driver} 的固件），然后重启；{MISMATCH_ZH}"
                    ),
                )
            }
            Advice::FirmwareOlder { chips, declared, driver } => {
                let (whose_en, whose_zh) = whose_firmware(chips);
                (
                    format!(
                        "upgrade {whose_en} to one in {declared} (the firmware of HDK {driver}: \
                         Ascend-hdk-<chip>-npu-firmware_<version>.run --full), then reboot; {MISMATCH_EN}"
                    ),
                    format!(
                        "将{whose_zh}升级到 {declared} 范围内的版本（HDK {driver} 的固件：\
                         Ascend-hdk-<chip>-npu-firmware_<version>.run --full），然后重启；{MISMATCH_ZH}"
                    ),
                )
            }
            Advice::InterfaceMissing { interface, cann } => (
                format!(
                    "the driver predates the {interface} interface {cann} needs: upgrade the driver and firmware to \
                     the HDK release of this CANN"
                ),
                format!("驱动早于 {cann} 所需的 {interface} 接口：请将驱动和固件升级到该 CANN 对应的 HDK 版本"),
            ),
            Advice::InterfaceTooOld { driver_key, required, cann_version, has } => (
                format!(
                    "upgrade the driver and firmware to an HDK release whose {driver_key} is at least {required} (the \
                     HDK release named in the release notes of CANN {cann_version}), or install a CANN that needs at \
                     most {driver_key} {has}; {MISMATCH_EN}"
                ),
                format!(
                    "将驱动和固件升级到 {driver_key} 不低于 {required} 的 HDK 版本（CANN {cann_version} \
                     版本说明书中配套的 HDK 版本），或安装最多只需要 {driver_key} {has} 的 CANN；{MISMATCH_ZH}"
                ),
            ),
            Advice::InnerLineOneSided { listed, line } => (
                format!(
                    "a pairing the driver does not declare; if jobs fail, install a CANN whose inner version line is \
                     one of {listed} (the CANN of the driver's HDK release), or upgrade the driver and firmware to an \
                     HDK release that lists {line}"
                ),
                format!(
                    "这是驱动未声明的配套关系；若作业失败，请安装内部版本线为 {listed} 之一的 CANN\
                     （驱动所属 HDK 版本配套的 CANN），或将驱动和固件升级到列出了 {line} 的 HDK 版本"
                ),
            ),
            Advice::InnerLineMissing { listed, line } => (
                format!(
                    "install a CANN whose inner version line is one of {listed} (the CANN of the driver's HDK \
                     release), or upgrade the driver and firmware to an HDK release that lists {line}; {MISMATCH_EN}"
                ),
                format!(
                    "请安装内部版本线为 {listed} 之一的 CANN（驱动所属 HDK 版本配套的 CANN），或将驱动和固件升级到\
                     列出了 {line} 的 HDK 版本；{MISMATCH_ZH}"
                ),
            ),
            Advice::DriverNotInstalled => (
                "the driver is not installed (or not at /usr/local/Ascend/driver): install the Ascend HDK driver \
                 package"
                    .to_owned(),
                "驱动未安装（或不在 /usr/local/Ascend/driver）：请安装昇腾 HDK 驱动包".to_owned(),
            ),
            Advice::DriverUnreadable => (
                "make the file readable, or reinstall the driver package".to_owned(),
                "使该文件可读，或重新安装驱动包".to_owned(),
            ),
            Advice::DriverNoVersion => (
                "the file is damaged: reinstall the driver package".to_owned(),
                "该文件已损坏：请重新安装驱动包".to_owned(),
            ),
            Advice::DriverDamagedLines => (
                "the file is damaged: reinstall the driver package (the checks read only its intact lines)".to_owned(),
                "该文件已损坏：请重新安装驱动包（检查只读取其中完好的行）".to_owned(),
            ),
            Advice::CannFileDamaged { package, file } => (
                format!("reinstall {package}: its file {file} is damaged"),
                format!("重新安装 {package}：其文件 {file} 已损坏"),
            ),
            Advice::CannNotInUse { label, latest } => {
                let (latest_en, latest_zh) = match latest {
                    Some(latest) => (latest.clone(), latest.clone()),
                    None => ("another version".to_owned(), "其他版本".to_owned()),
                };
                (
                    format!(
                        "{label} does not fit the driver but is not in use (`latest` is {latest_en}): uninstall it, \
                         or never point `latest` or set_env.sh at it"
                    ),
                    format!(
                        "{label} 与驱动不配套，但未被使用（`latest` 指向 {latest_zh}）：请卸载它，\
                         或不要让 `latest` 或 set_env.sh 指向它"
                    ),
                )
            }
            Advice::PinImageCann => (
                "pin the CANN version in the image build to one the node's driver supports".to_owned(),
                "在镜像构建中将 CANN 版本固定为本节点驱动支持的版本".to_owned(),
            ),
            Advice::TableNoRow { driver, table } => (
                format!("add a row for driver {driver} to your compatibility table ({table})"),
                format!("在您的兼容性表（{table}）中为驱动 {driver} 添加一行"),
            ),
            Advice::TableCann { driver, supported } => (
                format!("your table pairs driver {driver} with CANN {supported}; {MISMATCH_EN}"),
                format!("您的兼容性表将驱动 {driver} 与 CANN {supported} 配套；{MISMATCH_ZH}"),
            ),
            Advice::PodNotChecked => (
                "run the doctor on the node the pod runs on, with access to the API server and to the host's /run \
                 and /proc (in a container: the host's / mounted at --root and hostPID), naming a running container: \
                 --pod NAMESPACE/NAME/CONTAINER"
                    .to_owned(),
                "在该 Pod 所在的节点上运行 doctor，并确保可访问 API Server 以及主机的 /run 和 /proc\
                 （在容器中运行时：将主机的 / 挂载到 --root 并开启 hostPID），并指定一个运行中的容器：\
                 --pod NAMESPACE/NAME/CONTAINER"
                    .to_owned(),
            ),
            Advice::NoImage => (
                "pass --image-root <the image's unpacked root file system>, or --pod NAMESPACE/NAME[/CONTAINER] for a \
                 pod running on this node, to check the CANN an image brings"
                    .to_owned(),
                "如需检查镜像自带的 CANN，请传入 --image-root <镜像解包后的根文件系统>，或对运行在本节点上的 Pod 传入 \
                 --pod NAMESPACE/NAME[/CONTAINER]"
                    .to_owned(),
            ),
            Advice::ImageRootNoCann => (
                "point --image-root at the image's unpacked root file system (for example `docker export $(docker \
                 create IMAGE) | tar -x -C DIR`)"
                    .to_owned(),
                "让 --image-root 指向镜像解包后的根文件系统（例如 `docker export $(docker create IMAGE) | tar -x -C DIR`）"
                    .to_owned(),
            ),
            Advice::ContainerNoCann => (
                "the container brings no CANN: build its image on a CANN base image whose version the node's driver \
                 supports"
                    .to_owned(),
                "该容器未自带 CANN：请基于本节点驱动支持的 CANN 版本的基础镜像构建其镜像".to_owned(),
            ),
            Advice::ChipFirmwareUnknown => (
                "a chip that does not say which firmware it runs cannot be judged: see driver.chips_healthy".to_owned(),
                "芯片未上报其运行的固件版本，无法判断：请查看 driver.chips_healthy".to_owned(),
            ),
            Advice::RegisterRuntime { engine } => (
                format!(
                    "register the runtime: `ascend-ctk runtime configure --runtime {engine}` (or Huawei's installer \
                     with --install-scene={engine}), then restart {engine}; {RESTART_EN}"
                ),
                format!(
                    "注册昇腾容器运行时：`ascend-ctk runtime configure --runtime {engine}`（或使用华为安装包的 \
                     --install-scene={engine}），然后重启 {engine}；{RESTART_ZH}"
                ),
            ),
            Advice::RuntimeBinaryMissing { missing, engine } => (
                format!(
                    "the registered runtime binary does not exist: install it ({missing}) or run `ascend-ctk runtime \
                     configure --runtime {engine} --runtime-path <binary>`"
                ),
                format!(
                    "已注册的运行时可执行文件不存在：请安装它（{missing}），或执行 `ascend-ctk runtime configure \
                     --runtime {engine} --runtime-path <binary>`"
                ),
            ),
            Advice::DockerConfigBroken => (
                "Docker refuses to start with a broken daemon.json: fix the syntax, then register the runtime"
                    .to_owned(),
                "daemon.json 有误时 Docker 无法启动：请修正语法，然后注册运行时".to_owned(),
            ),
            Advice::NoEngineConfigured => (
                "register the runtime with the node's engine: `ascend-ctk runtime configure --runtime containerd` (or \
                 docker)"
                    .to_owned(),
                "向本节点的容器引擎注册运行时：`ascend-ctk runtime configure --runtime containerd`（或 docker）"
                    .to_owned(),
            ),
            Advice::ContainerdConfigBroken => (
                "containerd refuses to start with a broken config.toml: fix the syntax".to_owned(),
                "config.toml 有误时 containerd 无法启动：请修正语法".to_owned(),
            ),
            Advice::RuntimeClassNoCluster => (
                format!("{NO_CLUSTER_EN}, or pass the RuntimeClass manifest with --runtime-class-manifest"),
                format!("{NO_CLUSTER_ZH}；或用 --runtime-class-manifest 传入 RuntimeClass 清单"),
            ),
            Advice::RuntimeClassAccess => (
                "check the doctor's access to the API server (list on runtimeclasses.node.k8s.io)".to_owned(),
                "检查 doctor 对 API Server 的访问权限（runtimeclasses.node.k8s.io 的 list 权限）".to_owned(),
            ),
            Advice::RuntimeClassMissing { registered, manifest } => (
                format!("create the RuntimeClass and set `runtimeClassName: {registered}` in NPU pods:\n{manifest}"),
                format!("创建该 RuntimeClass，并在 NPU Pod 中设置 `runtimeClassName: {registered}`：\n{manifest}"),
            ),
            Advice::RuntimeClassHandler { first, registered, manifest } => (
                format!(
                    "the handler must equal the runtime name registered with the engine, or pods silently run with \
                     runc and no devices; the field is immutable, so delete RuntimeClass {first} (`kubectl delete \
                     runtimeclass {first}`) and apply it with `handler: {registered}`, or register the runtime under \
                     the handler's name:\n{manifest}"
                ),
                format!(
                    "handler 必须与向容器引擎注册的运行时名称一致，否则 Pod 会静默地以 runc 运行且没有设备；该字段不可修改，\
                     因此请删除 RuntimeClass {first}（`kubectl delete runtimeclass {first}`）并以 \
                     `handler: {registered}` 重新创建，或以 handler 的名称注册运行时：\n{manifest}"
                ),
            ),
            Advice::CdiSpecBroken => (
                "a spec that does not load makes CDI consumers fail: regenerate it with `ascend-ctk cdi generate`"
                    .to_owned(),
                "无法加载的规格文件会导致 CDI 使用方失败：请用 `ascend-ctk cdi generate` 重新生成".to_owned(),
            ),
            Advice::CdiSpecMissing => (
                "needed only for CDI injection (device plugin with CDI devices, podman --device): `ascend-ctk cdi \
                 generate`"
                    .to_owned(),
                "仅 CDI 注入方式需要（设备插件使用 CDI 设备、podman --device）：`ascend-ctk cdi generate`".to_owned(),
            ),
            Advice::CdiSpecStale { kind } => (
                format!(
                    "the spec is out of date with the chips (after a card change or driver reinstall): regenerate it \
                     with `ascend-ctk cdi generate` and remove old copies so only one spec of kind {kind} remains"
                ),
                format!(
                    "规格文件与芯片不一致（换卡或重装驱动之后）：请用 `ascend-ctk cdi generate` 重新生成，\
                     并删除旧文件，只保留一个 kind 为 {kind} 的规格文件"
                ),
            ),
            Advice::CdiSpecDir { dir, engine } => (
                format!("add {dir} to {engine}'s cdi_spec_dirs, then restart it"),
                format!("将 {dir} 加入 {engine} 的 cdi_spec_dirs，然后重启 {engine}"),
            ),
            Advice::CdiOffContainerd { plugin_key, config, spec_dirs } => (
                format!(
                    "set `enable_cdi = true` and `cdi_spec_dirs = {spec_dirs}` under [plugins.\"{plugin_key}\"] in \
                     {config} (`ascend-ctk runtime configure --runtime containerd --cdi` does it), then restart \
                     containerd"
                ),
                format!(
                    "在 {config} 的 [plugins.\"{plugin_key}\"] 下设置 `enable_cdi = true` 和 \
                     `cdi_spec_dirs = {spec_dirs}`（`ascend-ctk runtime configure --runtime containerd --cdi` \
                     可完成此操作），然后重启 containerd"
                ),
            ),
            Advice::CdiOffDocker { config } => (
                format!(
                    "add `\"features\": {{\"cdi\": true}}` to {config} (`ascend-ctk runtime configure --runtime docker \
                     --cdi` does it), then restart Docker (25.0 or newer)"
                ),
                format!(
                    "在 {config} 中添加 `\"features\": {{\"cdi\": true}}`（`ascend-ctk runtime configure --runtime \
                     docker --cdi` 可完成此操作），然后重启 Docker（25.0 或更高版本）"
                ),
            ),
            Advice::CdiUnsupported { engine, floor } => (
                format!("upgrade {engine} to {floor} or newer, the first release with CDI"),
                format!("将 {engine} 升级到 {floor} 或更高版本（首个支持 CDI 的版本）"),
            ),
            Advice::CdiEngineRestart => (
                "CDI is needed for `--allocate-mode cdi` of the device plugin, the DRA driver and `--device \
                 huawei.com/npu=<N>`; restarting an engine kills the node's containers: drain it first"
                    .to_owned(),
                "设备插件的 `--allocate-mode cdi`、DRA 驱动以及 `--device huawei.com/npu=<N>` 都需要 CDI；\
                 重启容器引擎会终止节点上的所有容器：请先排空（drain）节点"
                    .to_owned(),
            ),
            Advice::CdiVersion { engine_label, declared, known_limit, lowest, engine } => {
                let (verdict_en, verdict_zh) = if *known_limit {
                    (format!("{engine_label} does not load cdiVersion {declared}"), format!("{engine_label} 无法加载 cdiVersion {declared}"))
                } else {
                    (format!("{engine_label} may not load cdiVersion {declared}"), format!("{engine_label} 可能无法加载 cdiVersion {declared}"))
                };
                (
                    format!(
                        "{verdict_en}: regenerate the spec with `ascend-ctk cdi generate` (it writes the lowest \
                         version the spec needs, {lowest} or lower for a plain spec), or upgrade {engine}"
                    ),
                    format!(
                        "{verdict_zh}：请用 `ascend-ctk cdi generate` 重新生成规格文件（它写入规格所需的最低版本，\
                         普通规格为 {lowest} 或更低），或升级 {engine}"
                    ),
                )
            }
            Advice::KubeletVersionUnknown => (
                "check by hand: `kubectl get node <node> -o jsonpath='{.status.nodeInfo.kubeletVersion}'` or \
                 `kubelet --version`; the device plugin needs 1.26 or newer"
                    .to_owned(),
                "请手动检查：`kubectl get node <node> -o jsonpath='{.status.nodeInfo.kubeletVersion}'` 或 \
                 `kubelet --version`；设备插件需要 1.26 或更高版本"
                    .to_owned(),
            ),
            Advice::KubeletTooOld { floor, feature, version } => (
                format!(
                    "upgrade the kubelet to {floor} or newer (with the control plane first, one minor version at a \
                     time: `kubeadm upgrade node` and the kubelet package, then `systemctl restart kubelet`); the \
                     {feature} does not work with kubelet {version}"
                ),
                format!(
                    "将 kubelet 升级到 {floor} 或更高版本（先升级控制面，每次升级一个次版本：`kubeadm upgrade node` \
                     并升级 kubelet 软件包，然后 `systemctl restart kubelet`）；{feature} 无法在 kubelet {version} \
                     上工作"
                ),
            ),
            Advice::KubeletPredatesCdiGate => (
                format!("upgrade the kubelet to 1.29 or newer, {ANNOTATIONS_EN}"),
                format!("将 kubelet 升级到 1.29 或更高版本，{ANNOTATIONS_ZH}"),
            ),
            Advice::CdiGateOff { gate, config } => (
                format!(
                    "enable the gate: `featureGates: {{{gate}: true}}` in the KubeletConfiguration ({config}), or \
                     `--feature-gates={gate}=true` in KUBELET_EXTRA_ARGS (/etc/default/kubelet), then `systemctl \
                     restart kubelet`; {ANNOTATIONS_EN}"
                ),
                format!(
                    "开启该特性门控：在 KubeletConfiguration（{config}）中设置 `featureGates: {{{gate}: true}}`，\
                     或在 KUBELET_EXTRA_ARGS（/etc/default/kubelet）中加入 `--feature-gates={gate}=true`，\
                     然后 `systemctl restart kubelet`；{ANNOTATIONS_ZH}"
                ),
            ),
            Advice::DraDiscoveryAccess => (
                "check the API server configuration (the pod's service account, or KUBECONFIG) and its access"
                    .to_owned(),
                "检查 API Server 的配置（Pod 的 ServiceAccount 或 KUBECONFIG）及其访问权限".to_owned(),
            ),
            Advice::DraUpgrade => (DRA_UPGRADE_EN.to_owned(), DRA_UPGRADE_ZH.to_owned()),
            Advice::KubeletSocketNotSocket => (
                "remove it and restart the kubelet, which re-creates its socket".to_owned(),
                "删除该文件并重启 kubelet，kubelet 会重新创建其套接字".to_owned(),
            ),
            Advice::KubeletSocketAbsent => (
                "the kubelet is not running or uses another --root-dir: `systemctl status kubelet`; plugins can \
                 register only when this socket exists"
                    .to_owned(),
                "kubelet 未运行，或使用了其他 --root-dir：`systemctl status kubelet`；只有该套接字存在时插件才能注册"
                    .to_owned(),
            ),
            Advice::PluginNotRegistered => (PLUGIN_EN.to_owned(), PLUGIN_ZH.to_owned()),
            Advice::NoCluster => (NO_CLUSTER_EN.to_owned(), NO_CLUSTER_ZH.to_owned()),
            Advice::NodeNameUnknown => ("pass --node <name>".to_owned(), "请传入 --node <name>".to_owned()),
            Advice::NodeAccess => (
                "check the node name (--node) and the doctor's access to the API server (get on nodes)".to_owned(),
                "检查节点名（--node）以及 doctor 对 API Server 的访问权限（nodes 的 get 权限）".to_owned(),
            ),
            Advice::CapacityMissing => (
                format!("the device plugin has not registered its resource: {PLUGIN_EN}"),
                format!("设备插件尚未注册其资源：{PLUGIN_ZH}"),
            ),
            Advice::AllocatableShort => (
                "the plugin reports chips unhealthy, so the kubelet lowers allocatable: see driver.chips_healthy and \
                 `ascend-smi health`"
                    .to_owned(),
                "设备插件上报了不健康的芯片，因此 kubelet 调低了 allocatable：请查看 driver.chips_healthy 和 \
                 `ascend-smi health`"
                    .to_owned(),
            ),
            Advice::PodsAccess => (
                "check the doctor's access to the API server (list on pods)".to_owned(),
                "检查 doctor 对 API Server 的访问权限（pods 的 list 权限）".to_owned(),
            ),
            Advice::MigrationTwoPlugins { resources } => (
                format!(
                    "Huawei's device plugin and this project's both serve {resources} on this node, and the kubelet \
                     takes the devices of whichever registered last: finish the device-plugin step of \
                     docs/migration.md by removing the plugin you are leaving from this node's pool (running pods keep \
                     their chips), then check `kubectl ascend nodes` and this check again"
                ),
                format!(
                    "本节点上华为的设备插件和本项目的设备插件都在提供 {resources}，kubelet 只采用最后注册者的设备：\
                     请完成 docs/migration.md 中设备插件这一步，把要离开的那个插件从本节点池中移除（运行中的 Pod \
                     保留其芯片），然后执行 `kubectl ascend nodes` 并再次运行本检查"
                ),
            ),
            Advice::MigrationTwoRuntimes { huawei } => (
                format!(
                    "Huawei's runtime is still registered beside this project's ({huawei}): once no running pod uses \
                     its handler, remove its entry from the engine's configuration (Huawei's installer: \
                     `Ascend-docker-runtime_<version>_linux-<arch>.run --uninstall`) and restart the engine with the \
                     node drained; {RESTART_EN}"
                ),
                format!(
                    "华为的容器运行时仍与本项目的运行时一同注册（{huawei}）：当不再有运行中的 Pod 使用其 handler 时，\
                     从容器引擎配置中删除该条目（华为安装包：\
                     `Ascend-docker-runtime_<version>_linux-<arch>.run --uninstall`），并在排空节点后重启容器引擎；\
                     {RESTART_ZH}"
                ),
            ),
            Advice::MigrationTwoExporters => (
                "Huawei's npu-exporter and this project's both run here, so Prometheus scrapes each chip twice: \
                 with the chart's `exporter.naming=huawei` ours serves Huawei's names, so remove Huawei's \
                 npu-exporter DaemonSet from this node's pool once the dashboards show ours (docs/migration.md)"
                    .to_owned(),
                "华为的 npu-exporter 与本项目的 npu-exporter 同时在本节点运行，Prometheus 会把每个芯片采集两次：\
                 设置 Chart 的 `exporter.naming=huawei` 后本项目的导出器使用华为的指标名，待看板显示本项目的数据后，\
                 请把华为的 npu-exporter DaemonSet 从本节点池中移除（docs/migration.md）"
                    .to_owned(),
            ),
            Advice::MigrationMixed { huawei, ours } => (
                format!(
                    "this node runs parts of both stacks: Huawei's {huawei} and this project's {ours}; a node pool is \
                     migrated part by part, each part finished before the next: follow docs/migration.md from the \
                     first part not yet moved"
                ),
                format!(
                    "本节点同时运行两套组件的一部分：华为的 {huawei} 和本项目的 {ours}；节点池按组件逐个迁移，\
                     每个组件完成后再进行下一个：请从第一个尚未迁移的组件开始，按 docs/migration.md 操作"
                ),
            ),
            Advice::StaleAllocations => (
                "the kubelet still counts these NPUs as allocated although their pods are gone: restart the device \
                 plugin pod on this node; if the allocation stays, restart the kubelet (`systemctl restart kubelet`; \
                 running pods keep their devices)"
                    .to_owned(),
                "这些 NPU 的 Pod 已不存在，但 kubelet 仍将其计为已分配：请重启本节点上的设备插件 Pod；若分配仍未释放，\
                 请重启 kubelet（`systemctl restart kubelet`；运行中的 Pod 会保留其设备）"
                    .to_owned(),
            ),
            Advice::EventsAccess => (
                "check the doctor's access to the API server (list on events.k8s.io events in namespace default, \
                 where the Node Events of the device plugin and the DRA driver are)"
                    .to_owned(),
                "检查 doctor 对 API Server 的访问权限（default 命名空间中 events.k8s.io events 的 list 权限，\
                 设备插件和 DRA 驱动的节点事件存放在那里）"
                    .to_owned(),
            ),
            Advice::HeldOutResetFailed { chips } => (
                format!(
                    "{chips}: the hot reset failed or the chip did not boot back, so recovery stopped trying: check \
                     the chip with `ascend-smi health` and the driver's log (`dmesg`, /var/log/npu/), then, with no \
                     pod on it (`kubectl ascend pods`), reset it by hand (`npu-smi set -t reset -i <card> -c <chip>`) \
                     or reboot the node; {OFFERED_AGAIN_EN}; a chip that does not come back from that needs service"
                ),
                format!(
                    "{chips}：热复位失败或芯片复位后未能重新启动，自动恢复已停止尝试：请用 `ascend-smi health` 和驱动\
                     日志（`dmesg`、/var/log/npu/）检查该芯片，然后在芯片上没有 Pod 时（`kubectl ascend pods`）手动\
                     复位（`npu-smi set -t reset -i <card> -c <chip>`）或重启节点；{OFFERED_AGAIN_ZH}；若仍无法恢复，\
                     需要维修该芯片"
                ),
            ),
            Advice::HeldOutBudgetUsed { chips } => (
                format!(
                    "{chips}: recovery has used the chip's resets for now (3 per chip in 6 hours, 8 per node in an \
                     hour) and waits: the chip is reset again once the budget refills, or reset it by hand now \
                     (`npu-smi set -t reset -i <card> -c <chip>`, with no pod on it); a chip that needs resets this \
                     often is failing: collect its faults (`kubectl ascend faults`, `ascend-smi health`) and plan its \
                     service"
                ),
                format!(
                    "{chips}：自动恢复已用完该芯片当前的复位次数（每芯片 6 小时内 3 次，每节点 1 小时内 8 次），正在\
                     等待：次数恢复后会再次复位，也可以现在手动复位（芯片上没有 Pod 时执行 \
                     `npu-smi set -t reset -i <card> -c <chip>`）；需要如此频繁复位的芯片正在劣化：请收集其故障信息\
                     （`kubectl ascend faults`、`ascend-smi health`）并安排维修"
                ),
            ),
            Advice::HeldOutFaultReturned { chips } => (
                format!(
                    "{chips}: the fault came back soon after a reset cleared it, so another reset will not help: \
                     drain the node, collect the chip's faults and the driver's logs (`ascend-smi health`, `dmesg`, \
                     `msnpureport`) for Huawei support, and service or replace the chip; {OFFERED_AGAIN_EN}"
                ),
                format!(
                    "{chips}：故障在复位清除后很快再次出现，再次复位也无济于事：请排空（drain）该节点，收集芯片的故障\
                     信息和驱动日志（`ascend-smi health`、`dmesg`、`msnpureport`）提交华为技术支持，并维修或更换该\
                     芯片；{OFFERED_AGAIN_ZH}"
                ),
            ),
            Advice::HeldOut { chips } => (
                format!(
                    "{chips}: recovery holds the chip out of service for the reason its Event gives (see the \
                     evidence): check it with `ascend-smi health` and `kubectl ascend faults`, and \
                     reset it by hand (`npu-smi set -t reset -i <card> -c <chip>`, with no pod on it); \
                     {OFFERED_AGAIN_EN}"
                ),
                format!(
                    "{chips}：自动恢复因其事件中给出的原因（见证据）让该芯片停止服务：请用 \
                     `ascend-smi health` 和 `kubectl ascend faults` 检查，并手动复位（芯片上没有 Pod 时执行 \
                     `npu-smi set -t reset -i <card> -c <chip>`）；{OFFERED_AGAIN_ZH}"
                ),
            ),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// A parameter as the tests write it, so that its place in each text can be found.
    fn p(name: &str) -> String {
        format!("«{name}»")
    }

    /// One of every kind of advice, each parameter marked.
    fn samples() -> Vec<Advice> {
        let some = |name: &str| Some(p(name));
        vec![
            Advice::PciNoCards,
            Advice::KernelHeaders { release: p("release") },
            Advice::DriverNotLoaded,
            Advice::SecureBoot,
            Advice::DeviceNodesMissing,
            Advice::DeviceNodesNotChar,
            Advice::LibdcmiMissing,
            Advice::LibdcmiNotRegular,
            Advice::LibdcmiOwnership { commands: p("commands") },
            Advice::DcmiInitFailed,
            Advice::ApiFamily { expected: p("expected") },
            Advice::ChipsUnlisted,
            Advice::NoChips,
            Advice::ChipsUnhealthy { resets: p("resets") },
            Advice::FirmwareUnknown,
            Advice::FirmwareDamaged,
            Advice::TableFirmware { driver: p("driver"), firmware: p("firmware") },
            Advice::FirmwareNotActivated { chips: p("chips"), several: true, reported: p("reported") },
            Advice::FirmwareTooOld { chips: some("chips"), driver: p("driver") },
            Advice::DriverLacksFirmwareRange,
            Advice::FirmwareNewer {
                chips: some("chips"),
                hdk: some("hdk"),
                declared: p("declared"),
                driver: p("driver"),
            },
            Advice::FirmwareOlder { chips: None, declared: p("declared"), driver: p("driver") },
            Advice::InterfaceMissing { interface: p("interface"), cann: p("cann") },
            Advice::InterfaceTooOld {
                driver_key: p("key"),
                required: p("required"),
                cann_version: p("cann"),
                has: p("has"),
            },
            Advice::InnerLineOneSided { listed: p("listed"), line: p("line") },
            Advice::InnerLineMissing { listed: p("listed"), line: p("line") },
            Advice::DriverNotInstalled,
            Advice::DriverUnreadable,
            Advice::DriverNoVersion,
            Advice::DriverDamagedLines,
            Advice::CannFileDamaged { package: p("package"), file: p("file") },
            Advice::CannNotInUse { label: p("label"), latest: some("latest") },
            Advice::PinImageCann,
            Advice::TableNoRow { driver: p("driver"), table: p("table") },
            Advice::TableCann { driver: p("driver"), supported: p("supported") },
            Advice::PodNotChecked,
            Advice::NoImage,
            Advice::ImageRootNoCann,
            Advice::ContainerNoCann,
            Advice::ChipFirmwareUnknown,
            Advice::RegisterRuntime { engine: p("engine") },
            Advice::RuntimeBinaryMissing { missing: p("missing"), engine: p("engine") },
            Advice::DockerConfigBroken,
            Advice::NoEngineConfigured,
            Advice::ContainerdConfigBroken,
            Advice::RuntimeClassNoCluster,
            Advice::RuntimeClassAccess,
            Advice::RuntimeClassMissing { registered: p("registered"), manifest: p("manifest") },
            Advice::RuntimeClassHandler { first: p("first"), registered: p("registered"), manifest: p("manifest") },
            Advice::CdiSpecBroken,
            Advice::CdiSpecMissing,
            Advice::CdiSpecStale { kind: p("kind") },
            Advice::CdiSpecDir { dir: p("dir"), engine: p("engine") },
            Advice::CdiOffContainerd { plugin_key: p("plugin"), config: p("config"), spec_dirs: p("dirs") },
            Advice::CdiOffDocker { config: p("config") },
            Advice::CdiUnsupported { engine: p("engine"), floor: p("floor") },
            Advice::CdiEngineRestart,
            Advice::CdiVersion {
                engine_label: p("label"),
                declared: p("declared"),
                known_limit: true,
                lowest: p("lowest"),
                engine: p("engine"),
            },
            Advice::KubeletVersionUnknown,
            Advice::KubeletTooOld { floor: p("floor"), feature: p("feature"), version: p("version") },
            Advice::KubeletPredatesCdiGate,
            Advice::CdiGateOff { gate: p("gate"), config: p("config") },
            Advice::DraDiscoveryAccess,
            Advice::DraUpgrade,
            Advice::KubeletSocketNotSocket,
            Advice::KubeletSocketAbsent,
            Advice::PluginNotRegistered,
            Advice::NoCluster,
            Advice::NodeNameUnknown,
            Advice::NodeAccess,
            Advice::CapacityMissing,
            Advice::AllocatableShort,
            Advice::PodsAccess,
            Advice::StaleAllocations,
            Advice::MigrationTwoPlugins { resources: p("resources") },
            Advice::MigrationTwoRuntimes { huawei: p("huawei") },
            Advice::MigrationTwoExporters,
            Advice::MigrationMixed { huawei: p("huawei"), ours: p("ours") },
            Advice::EventsAccess,
            Advice::HeldOutResetFailed { chips: p("chips") },
            Advice::HeldOutBudgetUsed { chips: p("chips") },
            Advice::HeldOutFaultReturned { chips: p("chips") },
            Advice::HeldOut { chips: p("chips") },
        ]
    }

    /// Whether the text holds Chinese characters (CJK unified ideographs).
    pub(crate) fn has_han(text: &str) -> bool {
        text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
    }

    /// The marked parameters of a text, in order.
    fn parameters(text: &str) -> Vec<&str> {
        text.split('«').skip(1).filter_map(|part| part.split('»').next()).collect()
    }

    #[test]
    fn every_kind_of_advice_has_both_texts_with_the_same_parameters() {
        let samples = samples();
        // Each arm of `Advice::id` is a kind of advice; every one must have a sample here.
        let source = include_str!("advice.rs");
        let body = source.split("pub fn id(&self)").nth(1).expect("fn id").split("pub fn texts").next().expect("end");
        let kinds = body.lines().filter(|line| line.trim_start().starts_with("Advice::")).count();
        let ids: BTreeSet<&str> = samples.iter().map(Advice::id).collect();
        assert_eq!(ids.len(), samples.len(), "two samples of one kind, or two kinds with one id");
        assert_eq!(samples.len(), kinds, "a kind of advice without a sample in this test");
        for advice in &samples {
            let (en, zh_cn) = advice.texts();
            let id = advice.id();
            assert!(!en.is_empty() && !has_han(&en), "{id}: English text {en:?}");
            assert!(has_han(&zh_cn), "{id}: no Chinese translation: {zh_cn:?}");
            let (mut en_parameters, mut zh_parameters) = (parameters(&en), parameters(&zh_cn));
            en_parameters.sort_unstable();
            zh_parameters.sort_unstable();
            en_parameters.dedup();
            zh_parameters.dedup();
            assert_eq!(en_parameters, zh_parameters, "{id}: the translation drops or adds a parameter");
            let section = id.split('.').next().unwrap_or_default();
            assert!(["driver", "versions", "container_runtime", "kubernetes"].contains(&section), "{id}");
        }
    }

    #[test]
    fn joined_fixes_keep_their_ids_and_separators() {
        let joined = Fix::join([Advice::CdiSpecMissing.into(), Advice::CdiEngineRestart.into()], "; ");
        assert_eq!(joined.ids, ["container_runtime.cdi.no_spec", "container_runtime.cdi_engine.restart_needed"]);
        assert!(joined.en.contains("`ascend-ctk cdi generate`; CDI is needed"), "{}", joined.en);
        assert!(joined.zh_cn.contains("`ascend-ctk cdi generate`；设备插件"), "{}", joined.zh_cn);
        let labelled = Fix::from(Advice::PinImageCann).labelled("image «x»");
        assert!(labelled.en.starts_with("image «x»: pin") && labelled.zh_cn.starts_with("image «x»："));
        assert_eq!(labelled.text(Lang::ZhCn), labelled.zh_cn);
    }
}
