#!/usr/bin/env python3
"""Section 6 of benches/run.sh: container start with our injection against plain runc, same bundle.

Method: a fake Atlas 800T A2 host (`dcmi-sim fake-host`, device nodes as character devices when run as root) and one
busybox bundle (`runc spec`, process `/bin/true`, ASCEND_VISIBLE_DEVICES=0) on a tmpfs, as engines keep bundles and
runc's state under /run. hyperfine (no shell) times `runc run` of the bundle three ways: plain runc; through the
`ascend-runtime` link to ascend-ctk as an engine starts it, every argument runc's and the settings in ASCEND_CTK_*
variables (spec edited before runc: runtime mode); and the same with ASCEND_CTK_MOUNT_DELIVERY=hook (devices in the
spec, mounts by the createRuntime hook: hook mode; the hook is ascend-ctk-hook beside ascend-ctk, given the mounts
the runtime resolved). The runtime's chip cache is warm (the checking run of each mode fills it), as on a node after
its first container. config.json is restored before every run (not timed), so each run starts from the same bundle.
The commands alternate over --rounds rounds (hyperfine runs the commands that share an environment in one
invocation, so a round is a few invocations); the figures are medians over every run of every round. Each mode runs
in the same invocation as its floor, next to it, the two in the opposite order every other round, and its distance
to the floor is taken round by round (see distance_to_floor). To show where added time goes, the same rounds also
time plain runc on the specs runtime and hook mode write (and on the latter with /bin/true as the hook, also with
the driver mounts in the spec), runc started through /usr/bin/env (an exec in front of runc that does nothing else:
runtime mode's floor; on the spec with /bin/true as the hook, hook mode's floor), the runtime's own phase (runtime
mode exec'ing /bin/true instead of runc) with the chip cache warm and off (the cold path), `/usr/bin/env /bin/true`
(that phase's floor) and `ascend-ctk --version`; each mode's distance to its floor comes with a 95 % bootstrap
interval over the rounds. The runtime's phase runs once under `strace -f -T` to sum the time spent in each system
call, and 20 times under `perf record` to split its CPU time by the object (binary, libc, kernel) it falls in. Last,
podman starts the same rootfs with chip 0 injected from our CDI spec and without it (podman_cdi.py)."""

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import tempfile

import perf_common as common
import podman_cdi

CONTAINER_ID = "perf-container-start"
MODES = ("plain", "runtime", "hook")
STARTUP = "ctk_startup"
INJECTED_SPEC = "plain_runc_injected_spec"
SHIM_ONLY = "ctk_shim_phase"
SHIM_ONLY_COLD = "ctk_shim_phase_no_cache"
ENV_RUNC = "plain_runc_through_env"
HOOK_SPEC = "plain_runc_hook_spec"
TRUE_HOOK_SPEC = "plain_runc_true_hook_spec"
TRUE_HOOK_MOUNTS_SPEC = "plain_runc_true_hook_spec_mounts"
ENV_TRUE_HOOK = "plain_runc_true_hook_through_env"
ENV_PHASE = "env_phase"
# The resamples of the bootstrap interval of each mode's distance to its floor, and its fixed seed (a report that
# is regenerated from the same runs gives the same interval).
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 33
# The name under which ascend-ctk acts as the OCI runtime (ascend_oci::program::RUNTIME_LINK_NAME).
RUNTIME_LINK = "ascend-runtime"


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ctk", required=True, help="the ascend-ctk binary")
    parser.add_argument("--dcmi-sim", required=True, help="the dcmi-sim tool (lays out the fake host)")
    parser.add_argument("--library", required=True, help="libdcmi_sim.so")
    parser.add_argument("--runs", type=int, default=10, help="timed runs per mode and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cdi-runs", type=int, default=10, help="timed podman starts per command and round")
    parser.add_argument("--cdi-rounds", type=int, default=3)
    parser.add_argument("--work-dir", help="where to lay out the fake host and the bundle (default: a temporary "
                        "directory). ascend-ctk loads the host's libdcmi.so only when root owns every directory "
                        "above it and none is writable by group or others, as on a real server; /tmp is not such "
                        "a place, and there it falls back to scanning /dev")
    parser.add_argument("--out", required=True)
    return parser.parse_args()


def run_checked(argv, cwd=None, env=None):
    completed = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False)
    if completed.returncode != 0:
        raise common.MeasurementError(
            f"{' '.join(argv)} exited with {completed.returncode}\n{completed.stdout}\n{completed.stderr}")
    return completed


def make_bundle(bundle):
    """A busybox bundle running /bin/true, asking for chip 0; returns the path of the pristine config copy."""
    busybox = "/bin/busybox"
    if not os.path.isfile(busybox):
        raise common.MeasurementError("/bin/busybox is missing: install the Debian package busybox-static")
    rootfs_bin = os.path.join(bundle, "rootfs", "bin")
    os.makedirs(rootfs_bin)
    shutil.copy(busybox, os.path.join(rootfs_bin, "busybox"))
    for applet in ("sh", "true"):
        os.symlink("busybox", os.path.join(rootfs_bin, applet))
    run_checked(["runc", "spec"], cwd=bundle)
    config_path = os.path.join(bundle, "config.json")
    with open(config_path, encoding="utf-8") as config_file:
        config = json.load(config_file)
    config["process"]["terminal"] = False
    config["process"]["args"] = ["/bin/true"]
    config["process"]["env"].append("ASCEND_VISIBLE_DEVICES=0")
    pristine = os.path.join(bundle, "..", "config.pristine.json")
    for path in (config_path, pristine):
        with open(path, "w", encoding="utf-8") as out:
            json.dump(config, out)
    return os.path.abspath(pristine)


def commands(runtime, state_root, bundle):
    """The three modes' command lines; the runtime takes every argument for runc and its settings from
    mode_environments()."""
    runc_tail = ["--root", state_root, "run", "--bundle", bundle, CONTAINER_ID]
    return {"plain": ["runc", *runc_tail], "runtime": [runtime, *runc_tail], "hook": [runtime, *runc_tail]}


def mode_environments(host_root, chip_cache):
    """The environment of each command (the runtime's settings, as an engine's unit file sets them): runtime mode,
    hook mode, the runtime's own phase (/bin/true in runc's place) and that phase with the chip cache off."""
    base = {**os.environ, "ASCEND_CTK_HOST_ROOT": host_root, "ASCEND_CTK_CHIP_CACHE": chip_cache}
    shim_only = {**base, "ASCEND_CTK_RUNC": "/bin/true"}
    return {
        "base": base,
        "hook": {**base, "ASCEND_CTK_MOUNT_DELIVERY": "hook"},
        SHIM_ONLY: shim_only,
        SHIM_ONLY_COLD: {**shim_only, "ASCEND_CTK_CHIP_CACHE": "off"},
    }


# Floors that run in their mode's environment, so that hyperfine times them in the mode's invocation, next to it: the
# variables the runtime reads are ignored by env, runc and /bin/true.
FLOOR_ENVIRONMENTS = {ENV_TRUE_HOOK: "hook", ENV_PHASE: SHIM_ONLY}


def environment_of(mode, environments):
    return environments.get(FLOOR_ENVIRONMENTS.get(mode, mode), environments["base"])


def check_injection(argvs, environments, bundle, pristine, copies):
    """Runs each mode once and checks it did what it claims, so that the timing is not of a no-op; keeps the spec
    that runtime mode wrote as `copies["runtime"]`, the one hook mode wrote as `copies["hook"]`, and the latter with
    the hook replaced by /bin/true as `copies["true_hook"]`. Returns whether ascend-ctk found the chips through DCMI (the
    production path) rather than by scanning /dev."""
    config_path = os.path.join(bundle, "config.json")
    used_dcmi = True
    for mode in MODES:
        shutil.copy(pristine, config_path)
        completed = run_checked(argvs[mode], env=environment_of(mode, environments))
        if "because DCMI was not used" in completed.stderr:
            used_dcmi = False
        with open(config_path, encoding="utf-8") as config_file:
            config = json.load(config_file)
        devices = [d.get("path") for d in config.get("linux", {}).get("devices", []) or []]
        hooks = (config.get("hooks") or {}).get("createRuntime") or []
        injected = "/dev/davinci0" in devices
        expected = {"plain": (False, False), "runtime": (True, False), "hook": (True, True)}[mode]
        if (injected, bool(hooks)) != expected:
            raise common.MeasurementError(
                f"{mode} mode: /dev/davinci0 in spec {injected}, createRuntime hook {bool(hooks)}; "
                f"expected {expected}")
        if mode in ("runtime", "hook"):
            shutil.copy(config_path, copies[mode])
        if mode == "hook":
            copies["hook_binary"] = hooks[0]["path"]
            # The same spec with a hook that does nothing: what runc pays for running any hook process.
            config["hooks"]["createRuntime"] = [{"path": "/bin/true", "args": ["true"]}]
            common.write_json(copies["true_hook"], config)
            # And with the driver mounts of runtime mode's spec in it: what the mounts themselves cost runc (hook mode's
            # floor has none).
            with open(copies["runtime"], encoding="utf-8") as runtime_file:
                runtime_mounts = json.load(runtime_file).get("mounts") or []
            config["mounts"] = (config.get("mounts") or []) + [
                mount for mount in runtime_mounts if mount not in (config.get("mounts") or [])]
            common.write_json(copies["true_hook_mounts"], config)
    return used_dcmi


def require_dcmi(used_dcmi, host_root):
    """Refuses to time a runtime that did not find the chips through DCMI: without it the runtime scans /dev on every
    start and keeps no chip cache, which is not the path of a server (a results directory under /tmp, which others
    can write, does this: the runtime loads no library from under such a directory)."""
    if not used_dcmi:
        raise common.MeasurementError(
            f"ascend-ctk did not use the driver library under {host_root}: a directory above it is writable by "
            "others than root; give PERF_RESULTS_DIR a root-owned path (e.g. /var/lib/ascend-perf)")


def statically_linked(path):
    """Whether the ELF file at `path` has no program interpreter (no PT_INTERP program header): a static
    executable, which the kernel starts without the dynamic loader."""
    with open(path, "rb") as binary:
        header = binary.read(64)
        if header[:4] != b"\x7fELF" or header[4] != 2:
            raise common.MeasurementError(f"{path} is not a 64-bit ELF file")
        program_headers, entry_size, entries = (int.from_bytes(header[32:40], "little"),
                                                int.from_bytes(header[54:56], "little"),
                                                int.from_bytes(header[56:58], "little"))
        binary.seek(program_headers)
        table = binary.read(entry_size * entries)
    pt_interp = 3
    return all(int.from_bytes(table[i * entry_size:i * entry_size + 4], "little") != pt_interp
               for i in range(entries))


def mount_run_dir(directory):
    """A tmpfs at `directory`/run (made here), as engines keep bundles and runc's state on the /run tmpfs
    (containerd: /run/containerd/..., runc: /run/runc): mode 0755, root's, like /run. The caller unmounts it."""
    run_dir = os.path.join(directory, "run")
    os.makedirs(run_dir)
    run_checked(["mount", "-t", "tmpfs", "-o", "mode=0755,size=256m", "ascend-perf-run", run_dir])
    return run_dir


def hyperfine_groups(timed, runs, export, prefix=()):
    """Times `timed`, a list of (name, argv, prepare command, environment), `runs` times each after 2 warm-up runs;
    consecutive commands with the same environment share one hyperfine invocation, started through `prefix` (a
    command that runs hyperfine, e.g. in a mount namespace). Returns {name: (seconds of each run, CPU seconds)}."""
    found = {}
    index = 0
    while index < len(timed):
        environment = timed[index][3]
        group = []
        while index < len(timed) and timed[index][3] is environment:
            group.append(timed[index])
            index += 1
        argv = [*prefix, "hyperfine", "-N", "--warmup", "2", "--runs", str(runs), "--export-json", export]
        for _, _, prepare, _ in group:
            argv += ["--prepare", prepare]
        for name, command, _, _ in group:
            argv += ["-n", name, " ".join(command)]
        run_checked(argv, env=environment)
        with open(export, encoding="utf-8") as exported:
            results = json.load(exported)["results"]
        found.update({result["command"]: (result["times"], result["user"] + result["system"]) for result in results})
    return found


def hyperfine_round(argvs, environments, pristine, copies, bundle, runs, export, ctk, round_index=0):
    """One timed run of every command; each command's --prepare restores its spec. Consecutive commands with the
    same environment share one hyperfine invocation. Each mode and its floor are neighbours in one invocation, in
    the opposite order every other round (`round_index`): hyperfine runs all of one command's runs before the next
    command's, and whatever drifts within an invocation (the page cache, runc's state directory, the neighbours'
    load) then falls on both sides alike over the rounds."""
    config = os.path.join(bundle, "config.json")

    def pair(*commands):
        return list(commands) if round_index % 2 == 0 else list(reversed(commands))

    # Runtime mode against plain runc and against its floor: plain runc on the spec runtime mode writes, started
    # through /usr/bin/env (what any program that execs runc adds, whatever it does itself).
    commands_in_order = pair((MODES[0], argvs["plain"], pristine), ("runtime", argvs["runtime"], pristine),
                             (ENV_RUNC, ["/usr/bin/env", *argvs["plain"]], copies["runtime"]))
    # Hook mode against its floor: the same on the spec hook mode writes, /bin/true as the hook.
    commands_in_order += pair(("hook", argvs["hook"], pristine),
                              (ENV_TRUE_HOOK, ["/usr/bin/env", *argvs["plain"]], copies["true_hook"]))
    # To attribute the added time: plain runc on the spec runtime mode writes (the cost of the devices and mounts
    # themselves); on the spec hook mode writes, with our hook and with /bin/true as the hook (the hook's own share),
    # the latter also with the driver mounts in the spec; and the start-up of the ascend-ctk binary alone.
    commands_in_order.append((INJECTED_SPEC, argvs["plain"], copies["runtime"]))
    commands_in_order.append((HOOK_SPEC, argvs["plain"], copies["hook"]))
    commands_in_order.append((TRUE_HOOK_SPEC, argvs["plain"], copies["true_hook"]))
    commands_in_order.append((TRUE_HOOK_MOUNTS_SPEC, argvs["plain"], copies["true_hook_mounts"]))
    commands_in_order.append((STARTUP, [ctk, "--version"], pristine))
    # The runtime's own phase (everything runtime mode does, then exec /bin/true instead of runc) and its floor,
    # env exec'ing /bin/true. Both phases vary by a tenth of a millisecond where a whole start varies by several, so
    # their difference is the precise figure of what the runtime adds over an exec.
    commands_in_order += pair((SHIM_ONLY, argvs["runtime"], pristine), (ENV_PHASE, ["/usr/bin/env", "/bin/true"],
                                                                       pristine))
    # The same phase asking DCMI (the chip cache off): what the first container after a boot or a driver reload pays.
    commands_in_order.append((SHIM_ONLY_COLD, argvs["runtime"], pristine))
    return hyperfine_groups([(name, command, f"cp {spec} {config}", environment_of(name, environments))
                             for name, command, spec in commands_in_order], runs, export)


SYSCALL_LINE = re.compile(r"^\d+\s+(\w+)\(.*<([\d.]+)>$")


# The hook's exec: its own binary, or `ascend-ctk hook`.
HOOK_EXEC_LINE = re.compile(r'^(\d+)\s+execve\("[^"]*(?:/ascend-ctk-hook"|", \[[^]]*"hook")')
# The names our processes run under: the toolkit, its runtime link and the hook's own binary.
OUR_PROCESS_NAMES = ("ascend-ctk", RUNTIME_LINK, "ascend-ctk-hook")


def syscall_profile(argv, bundle, pristine, trace_path, top=6, hook_only=False, env=None):
    """Runs `argv` once under `strace -f -T` and sums the time spent inside each system call: [(name, calls,
    milliseconds)] of the top ones, plus the total inside system calls. With `hook_only`, only the calls of the
    hook process runc starts (ascend-ctk-hook, or `ascend-ctk hook`) count, from its exec on."""
    shutil.copy(pristine, os.path.join(bundle, "config.json"))
    run_checked(["strace", "-f", "-T", "-o", trace_path, *argv], env=env)
    totals = {}
    hook_pid = None
    with open(trace_path, encoding="utf-8", errors="replace") as trace:
        for line in trace:
            if hook_only:
                if hook_pid is None:
                    started = HOOK_EXEC_LINE.match(line)
                    hook_pid = started.group(1) if started else None
                    continue
                if line.split(maxsplit=1)[0] != hook_pid:
                    continue
            found = SYSCALL_LINE.match(line.strip())
            if found:
                calls, seconds = totals.get(found.group(1), (0, 0.0))
                totals[found.group(1)] = (calls + 1, seconds + float(found.group(2)))
    if hook_only and hook_pid is None:
        raise common.MeasurementError(f"no ascend-ctk hook process in {trace_path}")
    ranked = sorted(totals.items(), key=lambda item: item[1][1], reverse=True)
    return {
        "top": [{"syscall": name, "calls": calls, "ms": round(seconds * 1000.0, 3)}
                for name, (calls, seconds) in ranked[:top]],
        "total_ms": round(sum(seconds for _, seconds in totals.values()) * 1000.0, 3),
    }


def cpu_profile_by_object(argv, bundle, pristine, data_path, repeats=20, top=6, env=None):
    """CPU samples of our processes (the runtime's own phase, or the hook): `perf record` of `repeats` runs in a
    shell loop that restores the spec before each, split by the object the samples fall in: [(object, percent of
    our samples)]."""
    config = os.path.join(bundle, "config.json")
    command = " ".join(argv)
    loop = f"for i in $(seq {repeats}); do cp {pristine} {config}; {command} >/dev/null 2>&1; done"
    run_checked(["perf", "record", "-q", "-F", "20000", "-o", data_path, "--", "sh", "-c", loop], env=env)
    report = run_checked(["perf", "report", "-i", data_path, "--stdio", "--no-children", "--sort", "comm,dso"])
    shares = {}
    for line in report.stdout.splitlines():
        fields = line.split()
        # perf cuts the comm column to the widest comm it prints ("ascend-c"); a prefix of 6+ characters of
        # ascend-ctk, ascend-runtime (the link's name) or ascend-ctk-hook is ours.
        if (len(fields) >= 3 and fields[0].endswith("%") and len(fields[1]) >= 6
                and any(name.startswith(fields[1]) for name in OUR_PROCESS_NAMES)):
            shares[" ".join(fields[2:])] = shares.get(" ".join(fields[2:]), 0.0) + float(fields[0].rstrip("%"))
    total = sum(shares.values())
    if total == 0:
        raise common.MeasurementError(f"perf recorded no samples of ascend-ctk in {data_path}")
    ranked = sorted(shares.items(), key=lambda item: item[1], reverse=True)[:top]
    return [{"object": name, "percent": round(100.0 * share / total, 1)} for name, share in ranked]


def distance_to_floor(mode_rounds, floor_rounds):
    """A mode's distance to its floor in milliseconds: each round's difference of medians (mode minus floor, timed
    next to each other in that round), and the median of those differences over the rounds, with its 95 % bootstrap
    interval over the rounds. Pairing by round keeps what changes between rounds (the machine's load, a neighbour's
    build) out of the difference; a whole start varies by several milliseconds from run to run, so the interval
    says how far the median difference can be trusted."""
    if len(mode_rounds) != len(floor_rounds) or not mode_rounds:
        raise common.MeasurementError(f"{len(mode_rounds)} rounds of a mode against {len(floor_rounds)} of its floor")
    differences = [common.median(mode) - common.median(floor) for mode, floor in zip(mode_rounds, floor_rounds)]
    generator = random.Random(BOOTSTRAP_SEED)
    resampled = [common.median(generator.choices(differences, k=len(differences)))
                 for _ in range(BOOTSTRAP_RESAMPLES)]
    return {"median": round(common.median(differences) * 1000.0, 3),
            "ci95": [round(common.nearest_rank(resampled, 0.025) * 1000.0, 3),
                     round(common.nearest_rank(resampled, 0.975) * 1000.0, 3)]}


def main():
    args = parse_arguments()
    if args.work_dir:
        directory = os.path.abspath(args.work_dir)
        os.makedirs(directory, mode=0o755)
    else:
        directory = tempfile.mkdtemp(prefix="perf-container-start")
    mounted = None
    try:
        host_root = os.path.join(directory, "host")
        run_checked([args.dcmi_sim, "fake-host", "--topology", "atlas-800t-a2", "--root", host_root,
                     "--library", args.library])
        run_dir = mount_run_dir(directory)
        mounted = run_dir
        bundle = os.path.join(run_dir, "bundle")
        os.makedirs(bundle)
        pristine = make_bundle(bundle)
        state_root = os.path.join(run_dir, "runc")
        # ascend-ctk initialises the host's libdcmi.so (here the simulator) to find the chips, as on a server.
        os.environ["DCMI_SIM_CONFIG"] = os.path.join(host_root, "etc", "dcmi-sim", "topology.toml")
        # The runtime remembers DCMI's answer in this file (on a server: /run/ascend-ctk/chips.json); the first
        # run of check_injection fills it, so the timed runs see the steady state of a node.
        chip_cache = os.path.join(run_dir, "ascend-ctk", "chips.json")
        # The runtime as deploy/host/install.sh installs it: a link named ascend-runtime to ascend-ctk.
        runtime = os.path.join(directory, "bin", RUNTIME_LINK)
        os.makedirs(os.path.dirname(runtime))
        os.symlink(os.path.abspath(args.ctk), runtime)
        argvs = commands(runtime, state_root, bundle)
        environments = mode_environments(host_root, chip_cache)
        copies = {name: os.path.join(directory, f"config.{name}.json")
                  for name in ("runtime", "hook", "true_hook", "true_hook_mounts")}
        used_dcmi = check_injection(argvs, environments, bundle, pristine, copies)
        require_dcmi(used_dcmi, host_root)
        hook_binary = copies["hook_binary"]
        hook_static = statically_linked(hook_binary)
        shim_syscalls = syscall_profile(argvs["runtime"], bundle, pristine, os.path.join(directory, "shim.strace"),
                                        env=environments[SHIM_ONLY])
        shim_objects = cpu_profile_by_object(argvs["runtime"], bundle, pristine,
                                             os.path.join(directory, "shim.perf"), env=environments[SHIM_ONLY])
        # The hook on its own: plain runc on the spec hook mode writes, where the only ascend-ctk process is the hook.
        hook_syscalls = syscall_profile(argvs["plain"], bundle, copies["hook"], os.path.join(directory, "hook.strace"),
                                        hook_only=True)
        hook_objects = cpu_profile_by_object(argvs["plain"], bundle, copies["hook"],
                                             os.path.join(directory, "hook.perf"))
        # Each command's runs, round by round, and its CPU time per round.
        rounds = {mode: [] for mode in (*MODES, STARTUP, INJECTED_SPEC, ENV_RUNC, HOOK_SPEC, TRUE_HOOK_SPEC,
                                        TRUE_HOOK_MOUNTS_SPEC, ENV_TRUE_HOOK, SHIM_ONLY, SHIM_ONLY_COLD, ENV_PHASE)}
        cpu_seconds = {mode: [] for mode in rounds}
        for round_index in range(args.rounds):
            export = os.path.join(directory, f"hyperfine-{round_index}.json")
            for mode, (samples, cpu_s) in hyperfine_round(argvs, environments, pristine, copies, bundle, args.runs,
                                                          export, args.ctk, round_index).items():
                rounds[mode].append(samples)
                cpu_seconds[mode].append(cpu_s)
        # CDI: the same rootfs started by podman with a chip from our CDI spec, against plain podman.
        cdi = podman_cdi.measure(args.ctk, host_root, os.path.join(bundle, "rootfs"), directory, args.cdi_runs,
                                 args.cdi_rounds)
    finally:
        subprocess.run(["runc", "--root", os.path.join(directory, "run", "runc"), "delete", "--force", CONTAINER_ID],
                       capture_output=True, check=False)
        if mounted:
            subprocess.run(["umount", mounted], capture_output=True, check=False)
        shutil.rmtree(directory, ignore_errors=True)
    # Every run of every round, for the medians and percentiles over all runs.
    times = {mode: [run for samples in per_round for run in samples] for mode, per_round in rounds.items()}
    startup = times.pop(STARTUP)
    injected_spec = times.pop(INJECTED_SPEC)
    env_runc = times.pop(ENV_RUNC)
    hook_spec = times.pop(HOOK_SPEC)
    true_hook_spec = times.pop(TRUE_HOOK_SPEC)
    true_hook_mounts_spec = times.pop(TRUE_HOOK_MOUNTS_SPEC)
    env_true_hook = times.pop(ENV_TRUE_HOOK)
    shim_phase = times.pop(SHIM_ONLY)
    shim_phase_cold = times.pop(SHIM_ONLY_COLD)
    env_phase = times.pop(ENV_PHASE)
    medians_ms = {mode: round(common.median(samples) * 1000.0, 3) for mode, samples in times.items()}
    figures = {
        "ctk_used_dcmi": used_dcmi,
        "hook_binary": os.path.basename(hook_binary),
        "hook_statically_linked": hook_static,
        "podman_cdi": cdi,
        "ctk_startup_ms": round(common.median(startup) * 1000.0, 3),
        "plain_runc_injected_spec_ms": round(common.median(injected_spec) * 1000.0, 3),
        "plain_runc_through_env_ms": round(common.median(env_runc) * 1000.0, 3),
        "plain_runc_hook_spec_ms": round(common.median(hook_spec) * 1000.0, 3),
        "plain_runc_true_hook_spec_ms": round(common.median(true_hook_spec) * 1000.0, 3),
        "plain_runc_true_hook_spec_mounts_ms": round(common.median(true_hook_mounts_spec) * 1000.0, 3),
        "plain_runc_true_hook_through_env_ms": round(common.median(env_true_hook) * 1000.0, 3),
        "ctk_shim_phase_ms": round(common.median(shim_phase) * 1000.0, 3),
        "ctk_shim_phase_no_cache_ms": round(common.median(shim_phase_cold) * 1000.0, 3),
        "env_phase_ms": round(common.median(env_phase) * 1000.0, 3),
        "above_floor_ms": {"runtime": distance_to_floor(rounds["runtime"], rounds[ENV_RUNC]),
                           "hook": distance_to_floor(rounds["hook"], rounds[ENV_TRUE_HOOK]),
                           "runtime_phase": distance_to_floor(rounds[SHIM_ONLY], rounds[ENV_PHASE])},
        "rounds": args.rounds,
        "ctk_shim_syscalls": shim_syscalls,
        "ctk_shim_cpu_by_object": shim_objects,
        "ctk_hook_syscalls": hook_syscalls,
        "ctk_hook_cpu_by_object": hook_objects,
        "cpu_ms": {mode: round(common.median(values) * 1000.0, 3) for mode, values in cpu_seconds.items()},
        "runs_per_mode": {mode: len(samples) for mode, samples in times.items()},
        "median_ms": medians_ms,
        "p90_ms": {mode: round(common.nearest_rank(s, 0.9) * 1000.0, 3) for mode, s in times.items()},
        "ratio_to_plain": {mode: round(medians_ms[mode] / medians_ms["plain"], 3) for mode in MODES},
    }
    common.write_json(args.out, figures)
    print(args.out)


if __name__ == "__main__":
    common.run_script("container_start", main)
