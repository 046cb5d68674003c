/* SPDX-License-Identifier: MIT OR Apache-2.0
 *
 * DCMI (libdcmi.so) V1 interface, written by the ascend-rs developers from the
 * documented ABI of Huawei's `dcmi_interface_api.h`. The types declared here are
 * shared by both API families; the V2 (Ascend950) prototypes are in
 * `dcmi_interface_api_v2.h`, which includes this file.
 *
 * Every function, struct, field, enum, enumerator and constant keeps the
 * vendor's spelling (including the vendor's typos such as `bandwith_util_rate`,
 * `tx_np_lantency` and `DCMI_EVENT_FILTER_FLAG_SERVERITY`), so C code written
 * against the vendor header compiles against this one. Layouts are LP64
 * (x86_64 and aarch64 Linux); `long` / `unsigned long` fields are 8 bytes there.
 *
 * Differences from the vendor header, all source-compatible:
 *  - `DCMIDLLEXPORT` can be predefined (bindgen defines it empty, because it
 *    skips `static` declarations); it still defaults to `static`.
 *  - The vendor's anonymous unions and structs are declared at file scope
 *    with a tag (for example `union dcmi_event_event_t`), so generated
 *    bindings get stable names; members are accessed exactly as before.
 *  - `dcmi_subscribe_fault_event` has its real 4th parameter, the callback.
 *  - `dcmi_get_card_num_list` is declared: libdcmi exports it although the
 *    vendor header does not list it.
 *
 * All functions return 0 on success and a negative DCMI error code otherwise
 * (-8001 invalid parameter ... -8255 not supported). "card_id, device_id"
 * address one chip: card_id comes from dcmi_get_card_list, device_id is the
 * chip index on that card (0..3).
 */

#ifndef __DCMI_INTERFACE_API_H__
#define __DCMI_INTERFACE_API_H__

#ifdef __cplusplus
extern "C" {
#endif

/* The vendor declares every prototype `static`: the header is meant for a
 * shim that resolves each symbol with dlsym and defines the functions itself. */
#ifndef DCMIDLLEXPORT
#define DCMIDLLEXPORT static
#endif

/* ------------------------------------------------------------------------ */
/* Constants                                                                */
/* ------------------------------------------------------------------------ */

#define MAX_CHIP_NAME_LEN 32      /* chip_type / chip_name / chip_ver / npu_name */
#define TEMPLATE_NAME_LEN 32      /* vNPU template name */
#define DIE_ID_COUNT 5            /* 32-bit words in a die id */
#define AGENTDRV_PROF_DATA_NUM 3  /* PCIe bandwidth triples: [min, max, avg] */
#define MAX_LENGTH 256            /* each electronic-label string */
#define DCMI_UTIL_RESERVED_LEN 8  /* reserved words of dcmi_multi_utilization_info */

#define DCMI_VDEV_RES_NAME_LEN 16 /* vNPU name */
#define DCMI_VDEV_SIZE 20
#define DCMI_VDEV_FOR_RESERVE 32
#define DCMI_SOC_SPLIT_MAX 32     /* vNPU ids one SoC can be split into */

#define DCMI_MAX_EVENT_NAME_LENGTH 256
#define DCMI_MAX_EVENT_DATA_LENGTH 32
/* Bits of dcmi_event_filter.filter_flag (0 = deliver every event). */
#define DCMI_EVENT_FILTER_FLAG_EVENT_ID (1UL << 0)  /* only filter.event_id */
#define DCMI_EVENT_FILTER_FLAG_SERVERITY (1UL << 1) /* only severity >= filter.severity */
#define DCMI_EVENT_FILTER_FLAG_NODE_TYPE (1UL << 2) /* only filter.node_type */
#define DCMI_MAX_EVENT_RESV_LENGTH 32

#define HCCS_MAX_PCS_NUM 16       /* HCCS links (lanes) per chip */
#define HCCS_RES_PCS_NUM 64
#define IP_ADDR_LIST_LEN 1024     /* text list of ping-mesh destinations */
#define HCCS_PING_MESH_MAX_NUM 48 /* ping-mesh destinations per task */
#define ADDR_MAX_LEN 16

/* Ascend950 (A5) unified bus. */
#define UB_PING_MESH_MAX_NUM 48
#define UB_ADDR_MAX_LEN 16        /* bytes of one EID */
#define UB_DST_EIT_MAX_LEN 64     /* destination EIDs per task */
#define DCMI_URMA_EID_MAX_COUNT (32)
#define DCMI_URMA_EID_SIZE (16)   /* 128-bit EID */

/* Both prototype blocks below are always enabled, as in the vendor header. */
#define DCMI_VERSION_1
#define DCMI_VERSION_2

/* ------------------------------------------------------------------------ */
/* Enums (all int-sized)                                                    */
/* ------------------------------------------------------------------------ */

enum dcmi_ip_addr_type {
    DCMI_IPADDR_TYPE_V4 = 0,
    DCMI_IPADDR_TYPE_V6 = 1,
    DCMI_IPADDR_TYPE_ANY = 2
};

/** Kind of management unit behind a (card_id, device_id) pair. */
enum dcmi_unit_type {
    NPU_TYPE = 0,
    MCU_TYPE = 1,
    CPU_TYPE = 2,
    INVALID_TYPE = 0xFF
};

/** RoCE network health. OK (0) and INIT (6) both count as healthy. */
enum dcmi_rdfx_detect_result {
    DCMI_RDFX_DETECT_OK = 0,
    DCMI_RDFX_DETECT_SOCK_FAIL = 1,
    DCMI_RDFX_DETECT_RECV_TIMEOUT = 2,
    DCMI_RDFX_DETECT_UNREACH = 3,
    DCMI_RDFX_DETECT_TIME_EXCEEDED = 4,
    DCMI_RDFX_DETECT_FAULT = 5,
    DCMI_RDFX_DETECT_INIT = 6,
    DCMI_RDFX_DETECT_THREAD_ERR = 7,
    DCMI_RDFX_DETECT_IP_SET = 8,
    DCMI_RDFX_DETECT_MAX = 0xFF
};

enum dcmi_port_type {
    DCMI_VNIC_PORT = 0,
    DCMI_ROCE_PORT = 1,
    DCMI_INVALID_PORT = 2
};

/** main_cmd of dcmi_get_device_info. Callers also pass the raw value 12
 * ("chip info", sub_cmd 1 = struct dcmi_spod_info), which has no enumerator. */
enum dcmi_main_cmd {
    DCMI_MAIN_CMD_DVPP = 0,
    DCMI_MAIN_CMD_ISP = 1,
    DCMI_MAIN_CMD_TS_GROUP_NUM = 2,
    DCMI_MAIN_CMD_CAN = 3,
    DCMI_MAIN_CMD_UART = 4,
    DCMI_MAIN_CMD_UPGRADE = 5,
    DCMI_MAIN_CMD_HCCS = 16,
    DCMI_MAIN_CMD_TEMP = 50,
    DCMI_MAIN_CMD_SVM = 51,
    DCMI_MAIN_CMD_VDEV_MNG = 52,
    DCMI_MAIN_CMD_SIO = 56,
    DCMI_MAIN_CMD_DEVICE_SHARE = 0x8001,
    DCMI_MAIN_CMD_MAX = 0x8002
};

/** Clock selector of dcmi_get_device_frequency (result in MHz). */
enum dcmi_freq_type {
    DCMI_FREQ_DDR = 1,
    DCMI_FREQ_CTRLCPU = 2,
    DCMI_FREQ_HBM = 6,
    DCMI_FREQ_AICORE_CURRENT_ = 7,
    DCMI_FREQ_AICORE_MAX = 9,
    DCMI_FREQ_VECTORCORE_CURRENT = 12
};

enum dcmi_reset_channel {
    OUTBAND_CHANNEL = 0,
    INBAND_CHANNEL = 1
};

/** Boot stage. Drivers report 16 (not DCMI_BOOT_STATUS_FINISH) once a chip
 * has finished booting after a hot reset, so a field of this type may hold
 * values outside the enumerators. */
enum dcmi_boot_status {
    DCMI_BOOT_STATUS_UNINIT = 0,
    DCMI_BOOT_STATUS_BIOS = 1,
    DCMI_BOOT_STATUS_OS = 2,
    DCMI_BOOT_STATUS_FINISH = 3
};

/** Memory component of dcmi_get_device_ecc_info. */
enum dcmi_device_type {
    DCMI_DEVICE_TYPE_DDR = 0,
    DCMI_DEVICE_TYPE_SRAM = 1,
    DCMI_DEVICE_TYPE_HBM = 2,
    DCMI_DEVICE_TYPE_NPU = 3,
    DCMI_DEVICE_TYPE_NONE = 0xFF
};

enum dcmi_event_type {
    DCMI_DMS_FAULT_EVENT = 0
};

/** NDIE: die id of the chip (910 only); VDIE: the chip's UUID (all chips);
 * DDIE: Ascend950 only (the vendor's Go code passes 2; its header has no enumerator). */
enum dcmi_die_type {
    NDIE = 0,
    VDIE = 1,
    DDIE = 2
};

/** A3 (910_93) die placement: both dies of a chip together, or one each. */
enum dcmi_multi_die_policy {
    DCMI_MULTI_DIE_UNION_POLICY = 0,
    DCMI_MULTI_DIE_INDEP_POLICY = 1,
    DCMI_MULTI_DIE_POLICY_MAX = 2
};

/* ------------------------------------------------------------------------ */
/* Structs. Sizes and offsets are LP64; tests/layout.rs checks every one.   */
/* ------------------------------------------------------------------------ */

/** Strings are fixed buffers and need not be NUL-terminated. */
struct dcmi_chip_info {                          /* 100 bytes */
    unsigned char chip_type[MAX_CHIP_NAME_LEN];
    unsigned char chip_name[MAX_CHIP_NAME_LEN];
    unsigned char chip_ver[MAX_CHIP_NAME_LEN];
    unsigned int aicore_cnt;
};

struct dcmi_chip_info_v2 {                       /* 132 bytes */
    unsigned char chip_type[MAX_CHIP_NAME_LEN];
    unsigned char chip_name[MAX_CHIP_NAME_LEN];
    unsigned char chip_ver[MAX_CHIP_NAME_LEN];
    unsigned int aicore_cnt;
    unsigned char npu_name[MAX_CHIP_NAME_LEN];
};

struct dcmi_pcie_info_all {                      /* 64 bytes */
    unsigned int venderid;
    unsigned int subvenderid;
    unsigned int deviceid;
    unsigned int subdeviceid;
    int domain;
    unsigned int bdf_busid;
    unsigned int bdf_deviceid;
    unsigned int bdf_funcid;
    unsigned char reserve[32];
};

struct dcmi_die_id {                             /* 20 bytes */
    unsigned int soc_die[DIE_ID_COUNT];
};

struct dcmi_ecc_info {                           /* 36 bytes */
    int enable_flag;
    unsigned int single_bit_error_cnt;
    unsigned int double_bit_error_cnt;
    unsigned int total_single_bit_error_cnt;
    unsigned int total_double_bit_error_cnt;
    unsigned int single_bit_isolated_pages_cnt;
    unsigned int double_bit_isolated_pages_cnt;
    unsigned int single_bit_next_isolated_pages_cnt;
    unsigned int double_bit_next_isolated_pages_cnt;
};

struct dcmi_hbm_info {                           /* 32 bytes */
    unsigned long long memory_size;              /**< MB */
    unsigned int freq;                           /**< MHz */
    unsigned long long memory_usage;             /**< MB */
    int temp;                                    /**< degrees Celsius */
    unsigned int bandwith_util_rate;             /**< percent */
};

/** The vendor comment calls this 96 bytes; the real LP64 size is 112 because
 * of the padding after `freq` and the three 8-byte `unsigned long` fields. */
struct dcmi_get_memory_info_stru {               /* 112 bytes */
    unsigned long long memory_size;              /**< MB */
    unsigned long long memory_available;         /**< MB: free + hugepages_free * hugepagesize */
    unsigned int freq;                           /**< MHz */
    unsigned long hugepagesize;                  /**< KB */
    unsigned long hugepages_total;
    unsigned long hugepages_free;
    unsigned int utiliza;                        /**< percent */
    unsigned char reserve[60];
};

/** The address bytes of struct dcmi_ip_addr (an anonymous union in the vendor header). */
union dcmi_ip_addr_u_addr {                      /* 16 bytes */
    unsigned char ip6[16];
    unsigned char ip4[4];
};

struct dcmi_ip_addr {                            /* 20 bytes */
    union dcmi_ip_addr_u_addr u_addr;
    enum dcmi_ip_addr_type ip_type;              /**< set to V6 before the call to ask for IPv6 */
};

struct dcmi_base_resource {                      /* 64 bytes */
    unsigned long long token;
    unsigned long long token_max;
    unsigned long long task_timeout;
    unsigned int vfg_id;
    unsigned char vip_mode;
    unsigned char reserved[DCMI_VDEV_FOR_RESERVE - 1];
};

struct dcmi_computing_resource {                 /* 96 bytes */
    float aic;                                   /**< AI cores (may be fractional for a vNPU) */
    float aiv;
    unsigned short dsa;
    unsigned short rtsq;
    unsigned short acsq;
    unsigned short cdqm;
    unsigned short c_core;
    unsigned short ffts;
    unsigned short sdma;
    unsigned short pcie_dma;
    unsigned long long memory_size;              /**< MB */
    unsigned int event_id;
    unsigned int notify_id;
    unsigned int stream_id;
    unsigned int model_id;
    unsigned short topic_schedule_aicpu;
    unsigned short host_ctrl_cpu;
    unsigned short host_aicpu;
    unsigned short device_aicpu;
    unsigned short topic_ctrl_cpu_slot;
    unsigned int vdev_aicore_utilization;        /**< percent */
    unsigned long long vdev_memory_total;
    unsigned long long vdev_memory_free;
    unsigned char reserved[DCMI_VDEV_FOR_RESERVE - DCMI_VDEV_SIZE];
};

struct dcmi_media_resource {                     /* 56 bytes */
    float jpegd;
    float jpege;
    float vpc;
    float vdec;
    float pngd;
    float venc;
    unsigned char reserved[DCMI_VDEV_FOR_RESERVE];
};

struct dcmi_create_vdev_out {                    /* 52 bytes */
    unsigned int vdev_id;
    unsigned int pcie_bus;
    unsigned int pcie_device;
    unsigned int pcie_func;
    unsigned int vfg_id;
    unsigned char reserved[DCMI_VDEV_FOR_RESERVE];
};

/** vdev_id / vfg_id 0xFFFFFFFF = let the driver choose. */
struct dcmi_create_vdev_res_stru {               /* 104 bytes */
    unsigned int vdev_id;
    unsigned int vfg_id;
    char template_name[TEMPLATE_NAME_LEN];
    unsigned char reserved[64];
};

struct dcmi_vdev_query_info {                    /* 256 bytes */
    char name[DCMI_VDEV_RES_NAME_LEN];
    unsigned int status;
    unsigned int is_container_used;
    unsigned int vfid;
    unsigned int vfg_id;
    unsigned long long container_id;
    struct dcmi_base_resource base;
    struct dcmi_computing_resource computing;
    struct dcmi_media_resource media;
};

/** Buffer of dcmi_get_device_info(VDEV_MNG, sub_cmd 0 or 5); set vdev_id first. */
struct dcmi_vdev_query_stru {                    /* 264 bytes */
    unsigned int vdev_id;
    struct dcmi_vdev_query_info query_info;
};

/** Buffer of dcmi_get_device_info(VDEV_MNG, sub_cmd 2). */
struct dcmi_soc_free_resource {                  /* 224 bytes */
    unsigned int vfg_num;
    unsigned int vfg_bitmap;
    struct dcmi_base_resource base;
    struct dcmi_computing_resource computing;
    struct dcmi_media_resource media;
};

/** Buffer of dcmi_get_device_info(VDEV_MNG, sub_cmd 1). */
struct dcmi_soc_total_resource {                 /* 360 bytes */
    unsigned int vdev_num;
    unsigned int vdev_id[DCMI_SOC_SPLIT_MAX];
    unsigned int vfg_num;
    unsigned int vfg_bitmap;
    struct dcmi_base_resource base;
    struct dcmi_computing_resource computing;
    struct dcmi_media_resource media;
};

/** Buffer of dcmi_get_device_info(main_cmd 12, sub_cmd 1). */
struct dcmi_spod_info {                          /* 48 bytes */
    unsigned int sdid;
    unsigned int scale_type;
    unsigned int super_pod_id;
    unsigned int server_id;
    unsigned int chassis_id;                     /**< A5 only */
    unsigned int super_pod_type;                 /**< A5 only */
    unsigned int reserve[6];
};

struct dcmi_dms_fault_event {                    /* 352 bytes */
    unsigned int event_id;                       /**< fault code, e.g. 0x80E01801 */
    unsigned short deviceid;                     /**< logic id of the chip */
    unsigned char node_type;
    unsigned char node_id;
    unsigned char sub_node_type;
    unsigned char sub_node_id;
    unsigned char severity;                      /**< 0 warning, 1 minor, 2 major, 3 critical */
    unsigned char assertion;                     /**< 0 recovered, 1 raised, 2 one-off */
    int event_serial_num;
    int notify_serial_num;
    unsigned long long alarm_raised_time;        /**< seconds since the Unix epoch */
    char event_name[DCMI_MAX_EVENT_NAME_LENGTH];
    char additional_info[DCMI_MAX_EVENT_DATA_LENGTH];
    unsigned char resv[DCMI_MAX_EVENT_RESV_LENGTH];
};

/** Payload of struct dcmi_event, selected by its `type` (an anonymous union in the vendor header). */
union dcmi_event_event_t {                       /* 352 bytes */
    struct dcmi_dms_fault_event dms_event;       /**< type == DCMI_DMS_FAULT_EVENT */
};

/** What the fault-event callback receives. */
struct dcmi_event {                              /* 360 bytes */
    enum dcmi_event_type type;
    union dcmi_event_event_t event_t;            /* at offset 8 */
};

/** Passed by value to dcmi_subscribe_fault_event; all zero = no filter. */
struct dcmi_event_filter {                       /* 48 bytes */
    unsigned long long filter_flag;              /**< DCMI_EVENT_FILTER_FLAG_* bits */
    unsigned int event_id;
    unsigned char severity;
    unsigned char node_type;
    unsigned char resv[DCMI_MAX_EVENT_RESV_LENGTH];
};

struct dcmi_proc_mem_info {                      /* 16 bytes */
    int proc_id;
    unsigned long proc_mem_usage;                /**< bytes */
};

/** 0xFFFFFFFF in a field = not available. */
struct dcmi_board_info {                         /* 16 bytes */
    unsigned int board_id;
    unsigned int pcb_id;
    unsigned int bom_id;
    unsigned int slot_id;                        /**< PCIe slot */
};

/** Each array is [min, max, avg] in MB/ms. */
struct dcmi_pcie_link_bandwidth_info {           /* 88 bytes */
    int profiling_time;                          /**< input: sampling window in ms */
    unsigned int tx_p_bw[AGENTDRV_PROF_DATA_NUM];
    unsigned int tx_np_bw[AGENTDRV_PROF_DATA_NUM];
    unsigned int tx_cpl_bw[AGENTDRV_PROF_DATA_NUM];
    unsigned int tx_np_lantency[AGENTDRV_PROF_DATA_NUM];
    unsigned int rx_p_bw[AGENTDRV_PROF_DATA_NUM];
    unsigned int rx_np_bw[AGENTDRV_PROF_DATA_NUM];
    unsigned int rx_cpl_bw[AGENTDRV_PROF_DATA_NUM];
};

/** Buffer of dcmi_get_device_info(HCCS, sub_cmd 3). One entry per link. */
struct dcmi_hccs_statistic_info {                /* 512 bytes */
    unsigned int tx_cnt[HCCS_MAX_PCS_NUM];
    unsigned int rx_cnt[HCCS_MAX_PCS_NUM];
    unsigned int crc_err_cnt[HCCS_MAX_PCS_NUM];
    unsigned int retry_cnt[HCCS_MAX_PCS_NUM];
    unsigned int reserved_field_cnt[HCCS_RES_PCS_NUM];
};

/** Buffer of dcmi_get_device_info(HCCS, sub_cmd 5): 64-bit counters. */
struct dcmi_hccs_statistic_info_u64 {            /* 1024 bytes */
    unsigned long long tx_cnt[HCCS_MAX_PCS_NUM];
    unsigned long long rx_cnt[HCCS_MAX_PCS_NUM];
    unsigned long long crc_err_cnt[HCCS_MAX_PCS_NUM];
    unsigned long long retry_cnt[HCCS_MAX_PCS_NUM];
    unsigned long long reserved[HCCS_RES_PCS_NUM];
};

struct dcmi_hccs_bandwidth_info {                /* 280 bytes */
    int profiling_time;                          /**< input: sampling window in ms */
    double total_txbw;
    double total_rxbw;
    double tx_bandwidth[HCCS_MAX_PCS_NUM];
    double rx_bandwidth[HCCS_MAX_PCS_NUM];
};

/** Buffer of dcmi_get_device_info(SIO, sub_cmd 0): die-to-die CRC errors. */
struct dcmi_sio_crc_err_statistic_info {         /* 12 bytes */
    unsigned short tx_error_count;
    unsigned short rx_error_count;
    unsigned char reserved[8];
};

struct dcmi_elabel_info {                        /* 1280 bytes */
    char product_name[MAX_LENGTH];
    char model[MAX_LENGTH];
    char manufacturer[MAX_LENGTH];
    char manufacturer_date[MAX_LENGTH];
    char serial_number[MAX_LENGTH];
};

struct dcmi_hccsping_mesh_operate {              /* 1048 bytes */
    char dst_addr_list[IP_ADDR_LIST_LEN];
    int pkt_size;
    int pkt_send_num;
    int pkt_interval;
    int timeout;
    int task_interval;
    int task_id;
};

struct dcmi_hccsping_mesh_info {                 /* 3272 bytes */
    char dst_addr[HCCS_PING_MESH_MAX_NUM][ADDR_MAX_LEN];
    unsigned int suc_pkt_num[HCCS_PING_MESH_MAX_NUM];
    unsigned int fail_pkt_num[HCCS_PING_MESH_MAX_NUM];
    long max_time[HCCS_PING_MESH_MAX_NUM];
    long min_time[HCCS_PING_MESH_MAX_NUM];
    long avg_time[HCCS_PING_MESH_MAX_NUM];
    long tp95_time[HCCS_PING_MESH_MAX_NUM];
    int reply_stat_num[HCCS_PING_MESH_MAX_NUM];
    unsigned long long ping_total_num[HCCS_PING_MESH_MAX_NUM];
    int dest_num;
};

/** A5 only. */
struct dcmi_ub_ping_mesh_operate {               /* 1068 bytes */
    char src_eid[UB_ADDR_MAX_LEN];
    char dst_eid_list[UB_DST_EIT_MAX_LEN][UB_ADDR_MAX_LEN];
    int dst_num;
    int pkt_size;
    int pkt_send_num;
    int pkt_interval;
    int timeout;
    int task_interval;
    int task_id;
};

/** A5 only. */
struct dcmi_ub_ping_mesh_info {                  /* 3552 bytes */
    char src_eid[UB_ADDR_MAX_LEN];
    char dst_eid_list[UB_DST_EIT_MAX_LEN][UB_ADDR_MAX_LEN];
    unsigned int suc_pkt_num[UB_PING_MESH_MAX_NUM];
    unsigned int fail_pkt_num[UB_PING_MESH_MAX_NUM];
    long max_time[UB_PING_MESH_MAX_NUM];
    long min_time[UB_PING_MESH_MAX_NUM];
    long avg_time[UB_PING_MESH_MAX_NUM];
    long tp95_time[UB_PING_MESH_MAX_NUM];
    int reply_stat_num[UB_PING_MESH_MAX_NUM];
    unsigned long long ping_total_num[UB_PING_MESH_MAX_NUM];
    int dest_num;
    unsigned long occur_time;                    /**< ms */
};

/** All values are percent. */
struct dcmi_multi_utilization_info {             /* 48 bytes */
    unsigned int aic_util;
    unsigned int aiv_util;
    unsigned int aicore_util;
    unsigned int npu_util;
    unsigned int reserved[DCMI_UTIL_RESERVED_LEN];
};

/** IPv4-mapped view of dcmi_urma_eid_t (an anonymous struct in the vendor header). */
struct dcmi_urma_eid_in4 {                       /* 16 bytes */
    unsigned long reserved;                      /**< 0 for an IPv4-mapped id */
    unsigned int prefix;                         /**< 0x0000ffff for an IPv4-mapped id */
    unsigned int addr;                           /**< the IPv4 address */
};

/** IPv6 view of dcmi_urma_eid_t (an anonymous struct in the vendor header). */
struct dcmi_urma_eid_in6 {                       /* 16 bytes */
    unsigned long subnet_prefix;
    unsigned long interface_id;
};

/** A5 only: a 128-bit unified-bus endpoint id. */
typedef union dcmi_urma_eid {                    /* 16 bytes */
    unsigned char raw[DCMI_URMA_EID_SIZE];
    struct dcmi_urma_eid_in4 in4;
    struct dcmi_urma_eid_in6 in6;
} dcmi_urma_eid_t;

/** A5 only. */
typedef struct dcmi_urma_eid_info {              /* 24 bytes */
    dcmi_urma_eid_t eid;
    unsigned int eid_index;
} dcmi_urma_eid_info_t;

/** A5 only: which unified-bus port dcmiv2_get_port_pkt_stats_info reads (die, port 0..9). */
struct dcmi_ub_port_info {                       /* 8 bytes */
    int udie_id;
    int port_id;
};

/** A5 only; filled by dcmiv2_get_port_pkt_stats_info. Packet counters of one
 * unified-bus port, then the port MAC's pause/PFC/bad-frame counters. */
struct dcmi_port_pkt_stats_info {                /* 520 bytes */
    int port_mode;
    unsigned long long ub_glb_ipv4_pkt_cnt_rx;   /* @8 */
    unsigned long long ub_glb_ipv6_pkt_cnt_rx;
    unsigned long long unic_ipv4_pkt_cnt_rx;
    unsigned long long unic_ipv6_pkt_cnt_rx;
    unsigned long long ub_clan_pkt_cnt_rx;
    unsigned long long ub_umoc_ctph_cnt_rx;
    unsigned long long ub_umoc_ntph_cnt_rx;
    unsigned long long ub_mem_pkt_cnt_rx;
    unsigned long long unknown_pkt_cnt_rx;
    unsigned long long drop_ind_cnt_rx;
    unsigned long long err_ind_cnt_rx;
    unsigned long long to_host_pkt_cnt_rx;
    unsigned long long to_imp_pkt_cnt_rx;
    unsigned long long to_mar_pkt_cnt_rx;
    unsigned long long to_link_pkt_cnt_rx;
    unsigned long long to_noc_pkt_cnt_rx;
    unsigned long long route_err_cnt_rx;
    unsigned long long out_err_cnt_rx;
    unsigned long long length_err_cnt_rx;
    unsigned long long rx_busi_flit_num;
    unsigned long long rx_send_ack_flit;
    unsigned long long ub_glb_ipv4_pkt_cnt_tx;   /* @176 */
    unsigned long long ub_glb_ipv6_pkt_cnt_tx;
    unsigned long long unic_ipv4_pkt_cnt_tx;
    unsigned long long unic_ipv6_pkt_cnt_tx;
    unsigned long long ub_clan_pkt_cnt_tx;
    unsigned long long ub_umoc_ctph_cnt_tx;
    unsigned long long ub_umoc_ntph_cnt_tx;
    unsigned long long ub_mem_pkt_cnt_tx;
    unsigned long long unknown_pkt_cnt_tx;
    unsigned long long drop_ind_cnt_tx;
    unsigned long long err_ind_cnt_tx;
    unsigned long long lpbk_ind_cnt_tx;
    unsigned long long out_err_cnt_tx;
    unsigned long long length_err_cnt_tx;
    unsigned long long tx_busi_flit_num;
    unsigned long long tx_recv_ack_flit;
    unsigned long long retry_req_sum;
    unsigned long long retry_ack_sum;
    unsigned long long crc_error_sum;
    unsigned long long core_mib_rxpausepkts;
    unsigned long long core_mib_txpausepkts;
    unsigned long long core_mib_rxpfcpkts;
    unsigned long long core_mib_txpfcpkts;
    unsigned long long core_mib_rxbadpkts;
    unsigned long long core_mib_txbadpkts;
    unsigned long long core_mib_rxbadoctets;
    unsigned long long core_mib_txbadoctets;     /* @384 */
    unsigned long long reserved[16];             /* @392 */
};

/** Called on a driver thread for every fault event matching the subscription.
 * The event is only valid for the duration of the call. */
typedef void (*dcmi_fault_event_callback)(struct dcmi_event *fault_event);

/* ------------------------------------------------------------------------ */
/* Functions                                                                */
/* ------------------------------------------------------------------------ */

#if defined DCMI_VERSION_2

DCMIDLLEXPORT int dcmi_init(void);

/** list_len: capacity of card_list (64 is enough for every product). */
DCMIDLLEXPORT int dcmi_get_card_list(int *card_num, int *card_list, int list_len);

/** Not in the vendor header but exported by libdcmi; same shape as dcmi_get_card_list. */
DCMIDLLEXPORT int dcmi_get_card_num_list(int *card_num, int *card_list, int list_len);

DCMIDLLEXPORT int dcmi_get_device_num_in_card(int card_id, int *device_num);

DCMIDLLEXPORT int dcmi_get_device_id_in_card(int card_id, int *device_id_max, int *mcu_id, int *cpu_id);

DCMIDLLEXPORT int dcmi_get_device_type(int card_id, int device_id, enum dcmi_unit_type *device_type);

DCMIDLLEXPORT int dcmi_get_device_pcie_info_v2(int card_id, int device_id, struct dcmi_pcie_info_all *pcie_info);

DCMIDLLEXPORT int dcmi_get_device_chip_info(int card_id, int device_id, struct dcmi_chip_info *chip_info);

DCMIDLLEXPORT int dcmi_get_device_chip_info_v2(int card_id, int device_id, struct dcmi_chip_info_v2 *chip_info);

/** power in 0.1 W (not on 310P: use dcmi_mcu_get_power_info there). */
DCMIDLLEXPORT int dcmi_get_device_power_info(int card_id, int device_id, int *power);

/** health: 0 OK, 1 minor, 2 major, 3 critical, 0xFFFFFFFF absent.
 * Returns -8012 while the chip is dropping off the bus or rebooting. */
DCMIDLLEXPORT int dcmi_get_device_health(int card_id, int device_id, unsigned int *health);

/** error_code_list receives up to list_len raised fault codes. */
DCMIDLLEXPORT int dcmi_get_device_errorcode_v2(int card_id, int device_id, int *error_count,
                                               unsigned int *error_code_list, unsigned int list_len);

/** temperature in degrees Celsius. */
DCMIDLLEXPORT int dcmi_get_device_temperature(int card_id, int device_id, int *temperature);

/** voltage in 0.01 V. */
DCMIDLLEXPORT int dcmi_get_device_voltage(int card_id, int device_id, unsigned int *voltage);

DCMIDLLEXPORT int dcmi_get_device_ecc_info(int card_id, int device_id, enum dcmi_device_type input_type,
                                           struct dcmi_ecc_info *device_ecc_info);

/** frequency in MHz. */
DCMIDLLEXPORT int dcmi_get_device_frequency(int card_id, int device_id, enum dcmi_freq_type input_type,
                                            unsigned int *frequency);

DCMIDLLEXPORT int dcmi_get_device_hbm_info(int card_id, int device_id, struct dcmi_hbm_info *hbm_info);

/** DDR memory (chips without DDR, such as 910B, do not support it). */
DCMIDLLEXPORT int dcmi_get_device_memory_info_v3(int card_id, int device_id,
                                                 struct dcmi_get_memory_info_stru *memory_info);

/** input_type: 1 memory, 2 AI Core, 3 AI CPU, 4 control CPU, 5 memory bandwidth,
 * 6 HBM, 8 DDR, 10 HBM bandwidth, 12 vector core, 13 NPU overall, 14 AI Cube.
 * utilization_rate in percent. */
DCMIDLLEXPORT int dcmi_get_device_utilization_rate(int card_id, int device_id, int input_type,
                                                   unsigned int *utilization_rate);

DCMIDLLEXPORT int dcmi_get_device_multi_utilization_rate(int card_id, int device_id,
                                                         struct dcmi_multi_utilization_info *util_info);

/** As above, averaged over `period` (seconds). */
DCMIDLLEXPORT int dcmi_get_device_multi_utilization_rate_period(int card_id, int device_id,
                                                                struct dcmi_multi_utilization_info *util_info,
                                                                int period);

/** Generic query: *size is the capacity of buf on input and the bytes written on output. */
DCMIDLLEXPORT int dcmi_get_device_info(int card_id, int device_id, enum dcmi_main_cmd main_cmd,
                                       unsigned int sub_cmd, void *buf, unsigned int *size);

DCMIDLLEXPORT int dcmi_get_device_ip(int card_id, int device_id, enum dcmi_port_type input_type, int port_id,
                                     struct dcmi_ip_addr *ip, struct dcmi_ip_addr *mask);

/** Can block for a long time after a card drop. */
DCMIDLLEXPORT int dcmi_get_device_network_health(int card_id, int device_id, enum dcmi_rdfx_detect_result *result);

/** Out-param first: the logic id is written to the first argument. */
DCMIDLLEXPORT int dcmi_get_device_logic_id(int *device_logic_id, int card_id, int device_id);

DCMIDLLEXPORT int dcmi_create_vdevice(int card_id, int device_id, struct dcmi_create_vdev_res_stru *vdev,
                                      struct dcmi_create_vdev_out *out);

DCMIDLLEXPORT int dcmi_set_destroy_vdevice(int card_id, int device_id, unsigned int vdevid);

DCMIDLLEXPORT int dcmi_get_device_phyid_from_logicid(unsigned int logicid, unsigned int *phyid);

DCMIDLLEXPORT int dcmi_get_device_logicid_from_phyid(unsigned int phyid, unsigned int *logicid);

/** Out-params first: card_id and device_id are written to the first two arguments. */
DCMIDLLEXPORT int dcmi_get_card_id_device_id_from_logicid(int *card_id, int *device_id,
                                                          unsigned int device_logic_id);

/** Out-params first: card_id and device_id are written to the first two arguments. */
DCMIDLLEXPORT int dcmi_get_card_id_device_id_from_phyid(int *card_id, int *device_id, unsigned int device_phy_id);

DCMIDLLEXPORT int dcmi_get_product_type(int card_id, int device_id, char *product_type_str, int buf_size);

DCMIDLLEXPORT int dcmi_set_device_reset(int card_id, int device_id, enum dcmi_reset_channel channel_type);

/** channel_state 1 = out-of-band reset possible. */
DCMIDLLEXPORT int dcmi_get_device_outband_channel_state(int card_id, int device_id, int *channel_state);

DCMIDLLEXPORT int dcmi_pre_reset_soc(int card_id, int device_id);

DCMIDLLEXPORT int dcmi_rescan_soc(int card_id, int device_id);

DCMIDLLEXPORT int dcmi_get_netdev_brother_device(int card_id, int device_id, int *brother_card_id);

/** A chip that finished booting after a hot reset reports 16 (see enum dcmi_boot_status). */
DCMIDLLEXPORT int dcmi_get_device_boot_status(int card_id, int device_id, enum dcmi_boot_status *boot_status);

/** card_id = device_id = -1 subscribes to every chip. The filter is passed by
 * value. The vendor header omits the callback, but the library takes it. */
DCMIDLLEXPORT int dcmi_subscribe_fault_event(int card_id, int device_id, struct dcmi_event_filter filter,
                                             dcmi_fault_event_callback callback);

/** work_mode 0 = AMP, anything else = SMP. */
DCMIDLLEXPORT int dcmi_get_npu_work_mode(int card_id, unsigned char *work_mode);

DCMIDLLEXPORT int dcmi_get_device_die_v2(int card_id, int device_id, enum dcmi_die_type input_type,
                                         struct dcmi_die_id *die_id);

/** proc_info: caller's array; *proc_num receives the entry count. */
DCMIDLLEXPORT int dcmi_get_device_resource_info(int card_id, int device_id, struct dcmi_proc_mem_info *proc_info,
                                                int *proc_num);

DCMIDLLEXPORT int dcmi_get_device_board_info(int card_id, int device_id, struct dcmi_board_info *board_info);

DCMIDLLEXPORT int dcmi_get_pcie_link_bandwidth_info(int card_id, int device_id,
                                                    struct dcmi_pcie_link_bandwidth_info *pcie_link_bandwidth_info);

DCMIDLLEXPORT int dcmi_get_dcmi_version(char *dcmi_ver, int buf_size);

/** The firmware version the chip runs (for example "7.5.0.1.129"; the driver reads it from the chip's logic id).
 * version_len is the size of version_str and must be at least 64 (the driver's DRIVER_VERSION_MIN_LEN, else
 * -8001); *len receives the length written. The vendor's header spells the buffer `verison_str`.
 * Prototype and limit: Huawei's DCMI API reference as published in the driver repository github.com/verylucky01/driver,
 * docs/zh/Ascend_910_93_DCMI_API/Ascend_910_93_DCMI_API/dcmi_get_version.md. */
DCMIDLLEXPORT int dcmi_get_version(int card_id, int device_id, char *version_str, unsigned int version_len, int *len);

DCMIDLLEXPORT int dcmi_get_mainboard_id(int card_id, int device_id, unsigned int *mainboard_id);

/** No buffer size is passed: give affinity_cpu a generous buffer. */
DCMIDLLEXPORT int dcmi_get_affinity_cpu_info_by_device_id(int card_id, int device_id, char *affinity_cpu,
                                                          int *length);

DCMIDLLEXPORT int dcmi_get_hccs_link_bandwidth_info(int card_id, int device_id,
                                                    struct dcmi_hccs_bandwidth_info *hccs_bandwidth_info);

DCMIDLLEXPORT int dcmi_start_hccsping_mesh(int card_id, int device_id, int port_id,
                                           struct dcmi_hccsping_mesh_operate *hccsping_mesh);

DCMIDLLEXPORT int dcmi_stop_hccsping_mesh(int card_id, int device_id, int port_id, unsigned int task_id);

DCMIDLLEXPORT int dcmi_get_hccsping_mesh_info(int card_id, int device_id, int port_id, unsigned int task_id,
                                              struct dcmi_hccsping_mesh_info *hccsping_mesh_reply);

DCMIDLLEXPORT int dcmi_get_hccsping_mesh_state(int card_id, int device_id, int port_id, unsigned int task_id,
                                               unsigned int *state);

DCMIDLLEXPORT int dcmi_get_spod_node_status(int card_id, int device_id, unsigned int sdid, unsigned int *status);

DCMIDLLEXPORT int dcmi_set_spod_node_status(int card_id, int device_id, unsigned int sdid, unsigned int status);

DCMIDLLEXPORT int dcmi_get_multi_die_policy(enum dcmi_multi_die_policy *policy);

DCMIDLLEXPORT int dcmi_set_multi_die_policy(enum dcmi_multi_die_policy policy);

/** A5 only: ubping_mesh points to `count` operations. */
DCMIDLLEXPORT int dcmi_start_ub_ping_mesh(int card_id, int device_id, int count,
                                          struct dcmi_ub_ping_mesh_operate *ubping_mesh);

DCMIDLLEXPORT int dcmi_stop_ub_ping_mesh(int card_id, int device_id, int task_id);

DCMIDLLEXPORT int dcmi_get_ub_ping_mesh_info(int card_id, int device_id, int task_id,
                                             struct dcmi_ub_ping_mesh_info *ub_ping_mesh_reply, int mesh_reply_size,
                                             int *count);

DCMIDLLEXPORT int dcmi_get_ub_ping_mesh_state(int card_id, int device_id, int task_id, unsigned int *state);

DCMIDLLEXPORT int dcmi_get_urma_device_cnt(int card_id, int device_id, unsigned int *dev_cnt);

/** *eid_cnt is the capacity of eid_list on input and the entries written on output. */
DCMIDLLEXPORT int dcmi_get_eid_list_by_urma_dev_index(int card_id, int device_id, unsigned int dev_index,
                                                      dcmi_urma_eid_info_t *eid_list, unsigned int *eid_cnt);

#endif /* DCMI_VERSION_2 */

#if defined DCMI_VERSION_1
/* Legacy interfaces, kept by the vendor for compatibility. */

/** Legacy memory information (dcmi_get_memory_info). */
struct dcmi_memory_info_stru {                   /* 16 bytes */
    unsigned long long memory_size;              /**< MB */
    unsigned int freq;                           /**< MHz */
    unsigned int utiliza;                        /**< percent */
};

DCMIDLLEXPORT int dcmi_get_memory_info(int card_id, int device_id, struct dcmi_memory_info_stru *device_memory_info);

DCMIDLLEXPORT int dcmi_get_device_errorcode(int card_id, int device_id, int *error_count, unsigned int *error_code,
                                            int *error_width);

/** Card-level power from the MCU in 0.1 W; the power source for 310P cards. */
DCMIDLLEXPORT int dcmi_mcu_get_power_info(int card_id, int *power);

DCMIDLLEXPORT int dcmi_get_card_elabel_v2(int card_id, struct dcmi_elabel_info *elabel_info);

#endif /* DCMI_VERSION_1 */

#ifdef __cplusplus
}
#endif

#endif /* __DCMI_INTERFACE_API_H__ */
