"""Commands and files of the unprivileged OS user that owns the clusters.

When the driver runs as root, every server-side command runs as an
unprivileged OS user (PostgreSQL refuses to run as root) that owns the data
directory: VACSKIP_USER, default postgres.
"""

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

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


def remove_tree(path):
    shutil.rmtree(path, ignore_errors=True)


def run(cmd, **kw):
    """Run a command, raising with its output when it fails."""
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, **kw)
    if res.returncode != 0:
        raise RuntimeError(f"command failed ({res.returncode}): {' '.join(map(str, cmd))}\n"
                           f"{res.stdout}")
    return res.stdout
