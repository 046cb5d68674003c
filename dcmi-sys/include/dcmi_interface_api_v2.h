/* SPDX-License-Identifier: MIT OR Apache-2.0
 *
 * DCMI (libdcmi.so) V2 interface, the API of Ascend950 ("A5") servers, written
 * by the ascend-rs developers from the documented ABI of Huawei's
 * `dcmi_interface_api_v2.h`. Names and parameter types keep the vendor's
 * spelling; the structs and enums are those of `dcmi_interface_api.h`.
 *
 * How V2 differs from V1:
 *  - On Ascend950, `dcmi_init` fails and `dcmiv2_init` succeeds; on older chips
 *    (and with older drivers, which do not export these symbols at all) only
 *    V1 works. Callers try V1, then V2, to learn the API family.
 *  - Every call takes one `dev_id`, the chip's logic id (as enumerated by
 *    `dcmiv2_get_device_list`), instead of a (card_id, device_id) pair. There
 *    are no cards: no card list, no card/device conversions.
 *  - No vNPU, HCCS, MCU power, product type, super-pod status or multi-die
 *    policy calls. Unified-bus (UB) ping-mesh, URMA and per-port packet
 *    statistics are V2-only.
 *
 * Differences from the vendor header, all source-compatible:
 *  - `dcmiv2_subscribe_fault_event` has its real 3rd parameter, the callback;
 *    the vendor header omits it, the library takes it (as with V1's
 *    `dcmi_subscribe_fault_event`). dev_id -1 subscribes to every chip.
 *  - The phy/logic conversions take `unsigned int dev_id` as in the header
 *    Huawei's Kubernetes components compile against (the driver's own sources
 *    say `int`; both are one 32-bit register argument on LP64).
 */

#ifndef __DCMI_INTERFACE_API_V2_H__
#define __DCMI_INTERFACE_API_V2_H__

#include "dcmi_interface_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined DCMI_VERSION_2

DCMIDLLEXPORT int dcmiv2_init(void);

/** Logic ids of all chips: device_list receives up to list_len ids, *device_num the count. */
DCMIDLLEXPORT int dcmiv2_get_device_list(int *device_list, int *device_num, int list_len);

DCMIDLLEXPORT int dcmiv2_get_all_device_count(int *all_device_count);

DCMIDLLEXPORT int dcmiv2_get_device_type(int dev_id, enum dcmi_unit_type *device_type);

DCMIDLLEXPORT int dcmiv2_get_device_pcie_info(int dev_id, struct dcmi_pcie_info_all *pcie_info);

/** chip_name starting with "Ascend950" identifies the generation. */
DCMIDLLEXPORT int dcmiv2_get_device_chip_info(int dev_id, struct dcmi_chip_info_v2 *chip_info);

/** power in 0.1 W. */
DCMIDLLEXPORT int dcmiv2_get_device_power_info(int dev_id, int *power);

/** health: 0 OK, 1 minor, 2 major, 3 critical; -8012 while the chip is dropping or rebooting. */
DCMIDLLEXPORT int dcmiv2_get_device_health(int dev_id, unsigned int *health);

DCMIDLLEXPORT int dcmiv2_get_device_error_code_list(int dev_id, int *error_count, unsigned int *error_code_list,
                                                    unsigned int list_len);

/** temperature in degrees Celsius. */
DCMIDLLEXPORT int dcmiv2_get_device_temperature(int dev_id, int *temperature);

/** voltage in 0.01 V. */
DCMIDLLEXPORT int dcmiv2_get_device_voltage(int dev_id, unsigned int *voltage);

DCMIDLLEXPORT int dcmiv2_get_device_ecc_info(int dev_id, enum dcmi_device_type input_type,
                                             struct dcmi_ecc_info *device_ecc_info);

/** frequency in MHz. */
DCMIDLLEXPORT int dcmiv2_get_device_frequency(int dev_id, enum dcmi_freq_type input_type, unsigned int *frequency);

DCMIDLLEXPORT int dcmiv2_get_device_hbm_info(int dev_id, struct dcmi_hbm_info *hbm_info);

/** input_type as for dcmi_get_device_utilization_rate; percent. */
DCMIDLLEXPORT int dcmiv2_get_device_utilization_rate(int dev_id, int input_type, unsigned int *utilization_rate);

DCMIDLLEXPORT int dcmiv2_get_device_multi_utilization_rate(int dev_id, struct dcmi_multi_utilization_info *util_info);

DCMIDLLEXPORT int dcmiv2_get_device_multi_utilization_rate_period(int dev_id,
                                                                  struct dcmi_multi_utilization_info *util_info,
                                                                  int period);

/** Generic query: *size is the capacity of buf on input and the bytes written on output. */
DCMIDLLEXPORT int dcmiv2_get_device_info(int dev_id, enum dcmi_main_cmd main_cmd, unsigned int sub_cmd, void *buf,
                                         unsigned int *size);

DCMIDLLEXPORT int dcmiv2_get_device_network_health(int dev_id, enum dcmi_rdfx_detect_result *result);

/** Physical id (the N of /dev/davinciN) of a logic id. */
DCMIDLLEXPORT int dcmiv2_get_chip_phy_id_by_dev_id(unsigned int dev_id, unsigned int *phyid);

/** Logic id of a physical id. */
DCMIDLLEXPORT int dcmiv2_get_dev_id_by_chip_phy_id(unsigned int phyid, unsigned int *dev_id);

DCMIDLLEXPORT int dcmiv2_reset_device(int dev_id, enum dcmi_reset_channel channel_type);

/** channel_state 1 = out-of-band reset possible. */
DCMIDLLEXPORT int dcmiv2_get_device_outband_channel_state(int dev_id, int *channel_state);

DCMIDLLEXPORT int dcmiv2_pre_reset_device(int dev_id);

DCMIDLLEXPORT int dcmiv2_rescan_device(int dev_id);

/** A chip that finished booting after a hot reset reports 16 (see enum dcmi_boot_status). */
DCMIDLLEXPORT int dcmiv2_get_device_boot_status(int dev_id, enum dcmi_boot_status *boot_status);

/** dev_id -1 subscribes to every chip. The filter is passed by value. The
 * vendor header omits the callback, but the library takes it. Events carry the
 * logic id in dms_event.deviceid. */
DCMIDLLEXPORT int dcmiv2_subscribe_fault_event(int dev_id, struct dcmi_event_filter filter,
                                               dcmi_fault_event_callback callback);

DCMIDLLEXPORT int dcmiv2_get_device_die_id(int dev_id, enum dcmi_die_type input_type, struct dcmi_die_id *die_id);

/** proc_info: caller's array; *proc_num receives the entry count. */
DCMIDLLEXPORT int dcmiv2_get_device_proc_mem_info(int dev_id, struct dcmi_proc_mem_info *proc_info, int *proc_num);

DCMIDLLEXPORT int dcmiv2_get_device_board_info(int dev_id, struct dcmi_board_info *board_info);

DCMIDLLEXPORT int dcmiv2_get_pcie_link_bandwidth_info(int dev_id,
                                                      struct dcmi_pcie_link_bandwidth_info *pcie_link_bandwidth_info);

DCMIDLLEXPORT int dcmiv2_get_dcmi_version(char *dcmi_ver, int buf_size);

DCMIDLLEXPORT int dcmiv2_get_mainboard_id(int dev_id, unsigned int *mainboard_id);

/** No buffer size is passed: give affinity_cpu a generous buffer. */
DCMIDLLEXPORT int dcmiv2_get_affinity_cpu_info_by_dev_id(int dev_id, char *affinity_cpu, int *len);

/** ubping_mesh points to `count` operations. */
DCMIDLLEXPORT int dcmiv2_start_ub_ping_mesh(int dev_id, int count, struct dcmi_ub_ping_mesh_operate *ubping_mesh);

DCMIDLLEXPORT int dcmiv2_stop_ub_ping_mesh(int dev_id, int task_id);

DCMIDLLEXPORT int dcmiv2_get_ub_ping_mesh_info(int dev_id, int task_id,
                                               struct dcmi_ub_ping_mesh_info *ub_ping_mesh_reply,
                                               int mesh_reply_size, int *count);

DCMIDLLEXPORT int dcmiv2_get_ub_ping_mesh_state(int dev_id, int task_id, unsigned int *state);

DCMIDLLEXPORT int dcmiv2_get_urma_device_cnt(int dev_id, unsigned int *dev_cnt);

/** *eid_cnt is the capacity of eid_list on input and the entries written on output. */
DCMIDLLEXPORT int dcmiv2_get_eid_list_by_urma_dev_index(int dev_id, unsigned int dev_index,
                                                        dcmi_urma_eid_info_t *eid_list, unsigned int *eid_cnt);

/** The chip's electronic label (V1 has it per card: dcmi_get_card_elabel_v2). */
DCMIDLLEXPORT int dcmiv2_get_device_elabel_info(int dev_id, struct dcmi_elabel_info *elabel_info);

/** Packet counters of one unified-bus port: set ub_port_info (die, port) first. */
DCMIDLLEXPORT int dcmiv2_get_port_pkt_stats_info(int dev_id, struct dcmi_ub_port_info *ub_port_info,
                                                 struct dcmi_port_pkt_stats_info *port_pkt_stats_info);

#endif /* DCMI_VERSION_2 */

#ifdef __cplusplus
}
#endif

#endif /* __DCMI_INTERFACE_API_V2_H__ */
