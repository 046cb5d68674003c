"""Section 6's CDI figure: podman starting a busybox container with a chip injected from our CDI spec against the
same container without it. No process of ours is on this start path: `ascend-ctk cdi generate` wrote the spec
beforehand, and podman (through its CDI library) edits the OCI spec before it calls runc.

Podman 4.3 (Debian 12) reads CDI specs only from /etc/cdi and /var/run/cdi, so the spec goes to /var/run/cdi
under a kind unique to this run, removed afterwards; podman keeps its images and containers in private vfs
storage under the work directory, with the flags programs/tests/ctk_support/podman.rs uses on this machine."""

import json
import os
import shutil
import subprocess
import tempfile

import perf_common as common

CDI_DIR = "/var/run/cdi"
IMAGE = "localhost/ascend-perf-busybox"


def podman_base(storage, runroot):
    return ["podman", "--root", os.path.join(storage, "root"), "--runroot", runroot,
            "--storage-driver", "vfs", "--cgroup-manager", "cgroupfs", "--events-backend", "file",
            "--runtime", "runc"]


def run_argvs(storage, runroot, device):
    """The two timed command lines: plain podman, and the same with `--device <device>` (a CDI name)."""
    run = [*podman_base(storage, runroot), "run", "--rm", "--network", "none", "--ulimit", "nofile=4096:4096",
           "--ulimit", "nproc=4096:4096"]
    return {"plain": [*run, IMAGE, "/bin/true"], "cdi": [*run, "--device", device, IMAGE, "/bin/true"]}


def checked(argv, env=None):
    completed = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False)
    if completed.returncode != 0:
        raise common.MeasurementError(
            f"{' '.join(argv)} exited with {completed.returncode}\n{completed.stdout}\n{completed.stderr}")
    return completed


def measure(ctk, host_root, rootfs, work_dir, runs, rounds):
    """Median start of both commands over `rounds` alternating hyperfine rounds of `runs` runs each; a dict with
    "not_measured" and the reason when podman is missing or fails (the rest of section 6 stands without it)."""
    if shutil.which("podman") is None:
        return {"not_measured": "podman is not installed (scripts/deps/debian.txt)"}
    kind = f"perf{os.getpid()}.ascend.test/npu"
    spec = os.path.join(CDI_DIR, kind.replace("/", "-") + ".json")
    storage = os.path.join(work_dir, "podman")
    os.makedirs(storage)
    # Podman refuses a runroot longer than 50 characters; /run is where engines keep it anyway.
    runroot = tempfile.mkdtemp(prefix="ascend-perf-podman", dir="/run")
    try:
        checked([ctk, "cdi", "generate", "--cdi-kind", kind, "--output-dir", CDI_DIR, "--host-root", host_root])
        tarball = os.path.join(storage, "rootfs.tar")
        checked(["tar", "-C", rootfs, "-cf", tarball, "."])
        checked([*podman_base(storage, runroot), "import", tarball, IMAGE])
        argvs = run_argvs(storage, runroot, f"{kind}=0")
        # The rootfs has busybox's sh and true only; `[` is a builtin of its sh.
        injected = checked([*argvs["cdi"][:-1], "sh", "-c", "[ -c /dev/davinci0 ] && echo /dev/davinci0"])
        if "/dev/davinci0" not in injected.stdout:
            raise common.MeasurementError(f"podman --device {kind}=0 did not inject /dev/davinci0: {injected.stdout}")
        times = {name: [] for name in argvs}
        for round_index in range(rounds):
            export = os.path.join(storage, f"hyperfine-{round_index}.json")
            argv = ["hyperfine", "-N", "--warmup", "1", "--runs", str(runs), "--export-json", export]
            for name, command in argvs.items():
                argv += ["-n", name, " ".join(command)]
            checked(argv)
            with open(export, encoding="utf-8") as exported:
                for result in json.load(exported)["results"]:
                    times[result["command"]].extend(result["times"])
    except common.MeasurementError as error:
        return {"not_measured": f"podman failed: {str(error).strip().splitlines()[-1]}"}
    finally:
        if os.path.exists(spec):
            os.remove(spec)
        subprocess.run([*podman_base(storage, runroot), "system", "reset", "--force"], capture_output=True,
                       check=False)
        shutil.rmtree(runroot, ignore_errors=True)
    median_ms = {name: round(common.median(samples) * 1000.0, 3) for name, samples in times.items()}
    return {
        "kind": kind,
        "runs": {name: len(samples) for name, samples in times.items()},
        "median_ms": median_ms,
        "ratio": round(median_ms["cdi"] / median_ms["plain"], 3),
    }
