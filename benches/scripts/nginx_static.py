"""nginx (Debian) serving one file at /metrics on a loopback port: the practical ceiling for serving those bytes."""

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
            default_type "text/plain; version=0.0.4; charset=utf-8";
        }}
    }}
}}
"""


class NginxStatic:
    """nginx serving `body` at http://127.0.0.1:<port>/metrics, stopped and its directory removed on exit.

    Its directory is made world-readable and lives directly under the system temporary directory: when started
    as root, nginx's workers run as nobody and must reach the file."""

    def __init__(self, body, port):
        self.directory = tempfile.mkdtemp(prefix="perf-nginx")
        self.process = None
        try:
            self.process = self._start(body, port)
        except BaseException:
            shutil.rmtree(self.directory, ignore_errors=True)
            raise

    def _start(self, body, port):
        directory = self.directory
        for sub in ("www", "temp"):
            os.makedirs(os.path.join(directory, sub), exist_ok=True)
        with open(os.path.join(directory, "www", "metrics"), "wb") as out:
            out.write(body)
        for path in (directory, os.path.join(directory, "www")):
            os.chmod(path, 0o755)
        os.chmod(os.path.join(directory, "www", "metrics"), 0o644)
        config = os.path.join(directory, "nginx.conf")
        with open(config, "w", encoding="utf-8") as out:
            out.write(CONFIG.format(dir=directory, port=port))
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

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.process:
            self.process.stop()
        shutil.rmtree(self.directory, ignore_errors=True)
        return False
