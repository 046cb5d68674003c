"""nginx (Debian) serving one file at /metrics on a loopback port: the practical ceiling for serving those bytes."""

import gzip
import os
import shutil
import subprocess
import tempfile

import perf_common as common

CONFIG = """worker_processes 2;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000000;
    client_body_temp_path {dir}/temp/body;
    proxy_temp_path {dir}/temp/proxy;
    fastcgi_temp_path {dir}/temp/fastcgi;
    uwsgi_temp_path {dir}/temp/uwsgi;
    scgi_temp_path {dir}/temp/scgi;
    server {{
        listen 127.0.0.1:{port};
        location = /metrics {{
            root {dir}/www;
            gzip_static {gzip_static};
            default_type "text/plain; version=0.0.4; charset=utf-8";
        }}
    }}
}}
"""


class NginxStatic:
    """nginx serving `body` at http://127.0.0.1:<port>/metrics, stopped and its directory removed on exit.

    Its directory is made world-readable and lives directly under the system temporary directory: when started
    as root, nginx's workers run as nobody and must reach the file.

    With `precompressed`, `body` is gzip: it is served as `metrics.gz` by gzip_static to clients that accept gzip,
    and decompressed as `metrics` to the others."""

    def __init__(self, body, port, precompressed=False):
        self.directory = tempfile.mkdtemp(prefix="perf-nginx")
        self.process = None
        try:
            self.process = self._start(body, port, precompressed)
        except BaseException:
            shutil.rmtree(self.directory, ignore_errors=True)
            raise

    def _start(self, body, port, precompressed):
        directory = self.directory
        for sub in ("www", "temp"):
            os.makedirs(os.path.join(directory, sub), exist_ok=True)
        files = {"metrics": gzip.decompress(body), "metrics.gz": body} if precompressed else {"metrics": body}
        for name, content in files.items():
            with open(os.path.join(directory, "www", name), "wb") as out:
                out.write(content)
            os.chmod(os.path.join(directory, "www", name), 0o644)
        body = files["metrics"]
        for path in (directory, os.path.join(directory, "www")):
            os.chmod(path, 0o755)
        config = os.path.join(directory, "nginx.conf")
        with open(config, "w", encoding="utf-8") as out:
            out.write(CONFIG.format(dir=directory, port=port, gzip_static="on" if precompressed else "off"))
        check = subprocess.run(
            ["nginx", "-t", "-c", config, "-p", directory], capture_output=True, text=True, check=False)
        if check.returncode != 0:
            raise common.MeasurementError(f"nginx -t rejected {config}: {check.stderr}")
        process = common.Process(
            ["nginx", "-c", config, "-p", directory], log_path=os.path.join(directory, "stderr.log"))
        try:
            common.wait_http_ok(port, "/metrics", process)
            status, served, _ = common.http_get(port, "/metrics")
            if status != 200 or served != body:
                raise common.MeasurementError(f"nginx on port {port} does not serve the metrics body ({status})")
        except BaseException:
            process.stop()
            raise
        return process

    def cpu_seconds(self):
        """utime + stime of nginx's master and worker processes, in seconds (the workers serve; they live as long
        as the master here)."""
        master = self.process.pid
        with open(f"/proc/{master}/task/{master}/children", encoding="ascii") as children:
            pids = [master, *map(int, children.read().split())]
        return sum(common.cpu_seconds(pid) for pid in pids)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.process:
            self.process.stop()
        shutil.rmtree(self.directory, ignore_errors=True)
        return False
