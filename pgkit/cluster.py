"""Throwaway PostgreSQL clusters.

A small fixture layer in the spirit of testgres: initdb with --nosync and
trust authentication, a free port found by a bind test, pg_ctl -w start,
stop -m fast.  Every server-side command runs as the build user
(pgkit.proc).  The test suite keeps data directories and logs when a test
fails.
"""

import os
import re
import socket
import subprocess

import psycopg

from pgkit.proc import as_build_user, give_to_build_user, run


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """An initdb'ed, started data directory of one Server."""

    def __init__(self, server, workdir, settings=None, name="node"):
        self.server = server
        self.port = free_port()
        self.base = workdir / f"{name}-{self.port}"
        self.datadir = self.base / "data"
        self.logfile = self.base / "server.log"
        self.base.mkdir(parents=True)
        give_to_build_user(self.base)
        self.running = False
        self._block_size = None
        run(as_build_user([self.server.bindir / "initdb", "--nosync", "-A", "trust",
                           "-U", "postgres", "-E", "UTF8", "--no-locale",
                           "-D", self.datadir]))
        conf = {
            "listen_addresses": "'127.0.0.1'",
            "unix_socket_directories": f"'{self.base}'",
            "port": str(self.port),
            "fsync": "off",
            "autovacuum": "off",
            "log_line_prefix": "'%m [%p] '",
        }
        if server.major >= 18:
            # eager scanning of all-visible pages would blur the skip rule
            conf["vacuum_max_eager_freeze_failure_rate"] = "0"
        conf.update(settings or {})
        self.append_conf(conf)

    def append_conf(self, settings):
        with open(self.datadir / "postgresql.conf", "a") as f:
            for k, v in settings.items():
                f.write(f"{k} = {v}\n")

    def pg_ctl(self, *args):
        return run(as_build_user([self.server.bindir / "pg_ctl", "-D", self.datadir,
                                  "-l", self.logfile, "-w", *args]))

    def start(self):
        self.pg_ctl("start")
        self.running = True
        return self

    def stop(self):
        if self.running:
            self.pg_ctl("-m", "fast", "stop")
            self.running = False

    def connect(self, dbname="postgres", **kw):
        return psycopg.connect(host="127.0.0.1", port=self.port, user="postgres",
                               dbname=dbname, autocommit=True, **kw)

    @property
    def block_size(self):
        """The server's page size in bytes (block_size), asked of the
        stopped data directory (postgres -C) or of the running server."""
        if self._block_size is None:
            if self.running:
                with self.connect() as conn:
                    self._block_size = conn.execute(
                        "SELECT current_setting('block_size')::int").fetchone()[0]
            else:
                # the value on stdout; the server's log lines go to stderr
                self._block_size = int(subprocess.run(
                    as_build_user([self.server.bindir / "postgres", "-C", "block_size",
                                   "-D", self.datadir]),
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                    check=True).stdout.strip())
        return self._block_size

    def env(self):
        """Environment for client programs (pg_regress, psql) against this node."""
        env = dict(os.environ)
        env.update(PGHOST="127.0.0.1", PGPORT=str(self.port), PGUSER="postgres",
                   PATH=f"{self.server.bindir}:{env.get('PATH', '')}")
        return env

    def log(self):
        try:
            return self.logfile.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def crashed(self):
        return re.search(r"terminated by signal", self.log()) is not None
