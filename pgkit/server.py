"""PostgreSQL installations: what a server is, the one parser of server
specs ("MAJOR-VARIANT[+tap]=PREFIX", used by VACSKIP_SERVERS and the
benchmarks' command lines), private copies, and installing a PGXS module."""

import dataclasses
import shutil
from dataclasses import dataclass
from pathlib import Path

from pgkit.proc import as_build_user, give_to_build_user, run

# patched: built from pristine source + patches/pgMAJOR (has the hook)
# stock:   built from the same pristine source, no patches
# debian:  Debian's own postgresql-MAJOR package
# hook:    patches/pgMAJOR with the word-at-a-time walk's use in
#          vacuumlazy.c reverted (tools/pgdev variant hook): a reference only
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


def parse_server(spec):
    """A Server from "MAJOR-VARIANT=PREFIX", NAME (MAJOR-VARIANT) optionally
    followed by "+tap" for a server with the TAP test modules; ValueError
    when spec is not one."""
    name, _, prefix = spec.strip().partition("=")
    tap = name.endswith("+tap")
    name = name.removesuffix("+tap")
    major, _, variant = name.partition("-")
    if not major.isdigit() or variant not in VARIANTS or not prefix:
        raise ValueError(f"bad server {spec!r}: want MAJOR-VARIANT[+tap]=PREFIX, "
                         f"VARIANT one of {', '.join(VARIANTS)}")
    return Server(name=name, prefix=Path(prefix), major=int(major), variant=variant,
                  tap=tap)


def parse_servers(specs):
    """Servers from comma-separated specs (VACSKIP_SERVERS); empty entries
    are ignored."""
    return [parse_server(s) for s in specs.split(",") if s.strip()]


def parse_server_args(parser, specs):
    """Servers from a command line's specs; a bad one is the argparse
    parser's error."""
    try:
        return [parse_server(spec) for spec in specs]
    except ValueError as e:
        parser.error(str(e))


def server_at(prefix, variant="patched"):
    """The Server installed at prefix, its major read from its pg_config."""
    version = run([Path(prefix) / "bin" / "pg_config", "--version"]).split()[1]
    return parse_server(f"{version.split('.')[0]}-{variant}={prefix}")


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
