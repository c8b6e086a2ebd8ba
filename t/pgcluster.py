"""Throwaway PostgreSQL clusters for vacskip's pytest suite.

A small fixture layer in the spirit of testgres: initdb with --nosync and
trust authentication, a free port found by a bind test, pg_ctl -w start,
stop -m fast.  When the driver runs as root, every server-side command runs as
an unprivileged OS user (PostgreSQL refuses to run as root) that owns the data
directory.  Data directories and logs are kept when a test fails.
"""

import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import dataclasses
from dataclasses import dataclass
from pathlib import Path

import psycopg

BUILD_USER = os.environ.get("VACSKIP_USER", "postgres")


def as_build_user(cmd):
    """Prefix cmd so that it runs unprivileged when we are root."""
    if os.geteuid() == 0:
        return ["runuser", "-u", BUILD_USER, "--"] + list(cmd)
    return list(cmd)


def give_to_build_user(path):
    if os.geteuid() == 0:
        pw = pwd.getpwnam(BUILD_USER)
        for root, dirs, files in os.walk(path):
            os.chown(root, pw.pw_uid, pw.pw_gid)
            for name in files:
                os.chown(os.path.join(root, name), pw.pw_uid, pw.pw_gid)


def make_workdir(prefix):
    """A temporary directory owned by the unprivileged user."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    give_to_build_user(path)
    return path


def run(cmd, **kw):
    """Run a command, raising with its output when it fails."""
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, **kw)
    if res.returncode != 0:
        raise RuntimeError(f"command failed ({res.returncode}): {' '.join(map(str, cmd))}\n"
                           f"{res.stdout}")
    return res.stdout


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# patched: built from pristine source + patches/pgMAJOR (has the hook)
# stock:   built from the same pristine source, no patches
# debian:  Debian's own postgresql-MAJOR package
# hook:    patches/pgMAJOR up to the hook patch (tools/pgdev variant hook):
#          the patch level before the optimisations, a reference only
VARIANTS = ("patched", "stock", "debian", "hook")


@dataclass(frozen=True)
class Server:
    """One PostgreSQL installation the suites run against."""
    name: str          # e.g. "18-patched"
    prefix: Path       # install prefix (bin/, lib/, share/)
    major: int
    variant: str       # one of VARIANTS
    tap: bool          # has the TAP test modules (--enable-tap-tests)

    @property
    def patched(self):
        """Has the vacuum skip threshold hook."""
        return self.variant == "patched"

    @property
    def bindir(self):
        return self.prefix / "bin"

    @property
    def pg_config(self):
        return self.bindir / "pg_config"


def server_from_spec(spec):
    """A Server from "MAJOR-VARIANT=PREFIX" (the benchmarks' command line)."""
    name, _, prefix = spec.partition("=")
    major, _, variant = name.partition("-")
    if not major.isdigit() or variant not in VARIANTS or not prefix:
        raise ValueError(f"bad server {spec!r}: want MAJOR-VARIANT=PREFIX, "
                         f"VARIANT one of {', '.join(VARIANTS)}")
    return Server(name=name, prefix=Path(prefix), major=int(major), variant=variant,
                  tap=False)


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


def install_extension(top, dest, build_with, install_into):
    """Copy a PGXS module's tree `top` (vacskip, or a test module) to `dest`,
    build it once against the server whose pg_config is `build_with`, and
    install that same build into every server in `install_into` (pg_config
    paths)."""
    shutil.copytree(top, dest, ignore=shutil.ignore_patterns(
        ".git", "results", "tmp_check", "log", "*.o", "*.so", "*.bc", "__pycache__"))
    give_to_build_user(dest)
    run(as_build_user(["make", "-C", dest, "-s", f"PG_CONFIG={build_with}"]))
    for pg_config in install_into:
        cmd = ["make", "-C", dest, "-s", f"PG_CONFIG={pg_config}", "install"]
        pkglibdir = run([pg_config, "--pkglibdir"]).strip()
        # our builds belong to the build user; a packaged server to root
        run(cmd if Path(pkglibdir).stat().st_uid == 0 else as_build_user(cmd))
    return dest


def private_copy(server, dest):
    """Copy a server's installation to `dest` and return the Server for the
    copy.  Our builds are one prefix; Debian's package is spread over
    /usr/lib/postgresql/N and /usr/share/postgresql/N (with headers under
    /usr/include), which PostgreSQL finds relative to its bin directory, so
    the copy keeps that shape under `dest`."""
    if server.variant == "debian":
        usr = server.prefix.parent.parent.parent            # /usr
        rel = server.prefix.relative_to(usr)                 # lib/postgresql/N
        shutil.copytree(server.prefix, dest / rel, symlinks=True)
        share = usr / "share" / "postgresql" / str(server.major)
        shutil.copytree(share, dest / "share" / "postgresql" / str(server.major),
                        symlinks=True)
        (dest / "include").symlink_to(usr / "include")
        new_prefix = dest / rel
    else:
        shutil.copytree(server.prefix, dest, symlinks=True)
        new_prefix = dest
    give_to_build_user(dest)
    return dataclasses.replace(server, prefix=new_prefix)


def remove_tree(path):
    shutil.rmtree(path, ignore_errors=True)
