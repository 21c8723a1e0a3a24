#!/usr/bin/env python3
"""Builds the Linux peer's guest (kernel + initramfs) from Debian 12 packages.

    python bench/peer/linux/build_image.py            # into bench/peer/linux/cache/ (git-ignored)
    python bench/peer/linux/build_image.py --force    # rebuild even if the image is there
    python bench/peer/linux/build_image.py --kernel-package linux-image-6.1.0-47-cloud-amd64-unsigned

What it does (standard library plus `apt-get download`, `dpkg-deb -x`, `readelf`, `cpio`, `gzip`):

1. `apt-get download` the kernel package (Debian 12's `linux-image-6.1.0-*-cloud-amd64-unsigned`:
   the newest apt offers unless `--kernel-package` names one), `busybox-static`, `iperf3`,
   `iproute2`, `ethtool`, `tcpdump`, and the library packages their `Depends` name, recursively (only
   `lib*` packages and `libc6` are followed: the tools' shell scripts, perl and debconf are not
   needed in the guest). Nothing comes from the host's own installation.
2. `dpkg-deb -x` each into a staging tree.
3. Copies into the image root: the kernel modules the experiments need (`MODULES` below) with
   every module they depend on (the `depends=` field of each `.ko`'s `.modinfo` section, read
   here; the package ships no `modules.dep`), in a load order written to `/etc/modules.load`;
   the binaries `iperf3`, `tc`, `ip`, `ss`, `ethtool`, `tcpdump` and every shared library they need
   (their ELF `NEEDED` entries, followed transitively inside the staging tree); busybox with its
   applet links; and the guest's `init` (`guest/init`, committed text).
4. Packs the root with `cpio -H newc` and gzip into `cache/base.cpio.gz`, copies the kernel to
   `cache/vmlinuz`, and writes `cache/image.json` (package names and versions, kernel release).

Each experiment adds a second, tiny cpio archive with its case (`/case.sh`); the kernel unpacks
concatenated archives in order (Documentation/driver-api/early-userspace/buffer-format.rst).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("AQMLAB_LINUX_CACHE", HERE / "cache"))
GUEST = HERE / "guest"

KERNEL_PATTERN = re.compile(r"^linux-image-6\.1\.0-(\d+)-cloud-amd64-unsigned$")
# tcpdump (issue 30, session 8): the opt-in header capture of a case (`LinuxCase.capture`); it
# is only run when a case asks, but it is always in the image, so one image serves every case.
TOOLS = ["busybox-static", "iperf3", "iproute2", "ethtool", "tcpdump"]
# Kernel modules loaded at boot (plus their dependencies). veth: the links; sch_*: every
# discipline a case may use; cls_u32: per-flow netem delays (RTT-unfairness cases); tcp_*:
# congestion controls not built in (CUBIC and Reno are built in); tcp_diag: `ss -i` reads
# TCP_INFO through it (without it ss falls back to /proc/net/tcp: no bytes_acked, no rtt).
MODULES = [
    "veth", "sch_htb", "sch_netem", "sch_red", "sch_codel", "sch_pie", "sch_fq_pie", "sch_cake",
    "sch_sfq", "sch_tbf", "sch_fq", "sch_prio", "cls_u32", "tcp_bbr", "tcp_dctcp", "inet_diag", "tcp_diag",
]
BINARIES = ["usr/bin/iperf3", "sbin/tc", "bin/ip", "bin/ss", "sbin/ethtool", "usr/bin/tcpdump"]
# Library packages whose names do not start with "lib".
EXTRA_LIBS = ("zlib1g",)
LIB_DIRS = ["lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", "lib64", "usr/lib64"]


def run(cmd: list[str], **kw) -> str:
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr.strip()[-2000:]}")
    return p.stdout


def newest_kernel_package() -> str:
    out = run(["apt-cache", "pkgnames", "linux-image-6.1.0-"])
    found = sorted((int(m.group(1)), name) for name in out.split() if (m := KERNEL_PATTERN.match(name)))
    if not found:
        raise SystemExit("apt offers no linux-image-6.1.0-*-cloud-amd64-unsigned package: "
                         "run `apt-get update` on a Debian 12 (bookworm) system")
    return found[-1][1]


def depends(deb: Path) -> list[str]:
    """The package names in a .deb's Depends and Pre-Depends (first alternative of each)."""
    names = []
    for field in ("Pre-Depends", "Depends"):
        text = run(["dpkg-deb", "-f", str(deb), field]).strip()
        for item in filter(None, (x.strip() for x in text.split(","))):
            names.append(re.split(r"[\s(:|]", item.split("|")[0].strip())[0])
    return names


def download(packages: list[str], dest: Path) -> dict[str, Path]:
    """`apt-get download` each package (and its lib* dependencies, recursively) into dest."""
    dest.mkdir(parents=True, exist_ok=True)
    have: dict[str, Path] = {}
    todo = list(packages)
    while todo:
        batch = [p for p in dict.fromkeys(todo) if p not in have]
        todo = []
        if not batch:
            break
        missing = [p for p in batch if not list(dest.glob(f"{p}_*.deb"))]
        if missing:
            print(f"apt-get download {' '.join(missing)}", file=sys.stderr, flush=True)
            run(["apt-get", "download", *missing], cwd=dest)
        for p in batch:
            debs = sorted(dest.glob(f"{p}_*.deb"))
            if not debs:
                raise SystemExit(f"apt-get download {p}: no .deb appeared in {dest}")
            have[p] = debs[-1]
            todo += [d for d in depends(debs[-1]) if (d.startswith("lib") or d in EXTRA_LIBS) and d not in have]
    return have


def modinfo_depends(ko: Path) -> list[str]:
    """The `depends=` entry of a kernel module's .modinfo section (ELF64 little-endian)."""
    data = ko.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise SystemExit(f"{ko}: not an ELF64 object")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_off = sections[shstrndx][4]
    for name, _type, _flags, _addr, off, size, *_ in sections:
        end = data.index(b"\0", names_off + name)
        if data[names_off + name:end] == b".modinfo":
            for entry in data[off:off + size].split(b"\0"):
                if entry.startswith(b"depends="):
                    return [d for d in entry[8:].decode().split(",") if d]
            return []
    return []


def module_order(moddir: Path, wanted: list[str]) -> list[Path]:
    """The .ko files of `wanted` and their dependencies, each after everything it depends on."""
    index = {}
    for ko in moddir.rglob("*.ko"):
        index[ko.stem.replace("-", "_")] = ko
    builtin = {Path(l).stem.replace("-", "_") for l in (moddir / "modules.builtin").read_text().split()}
    order: list[Path] = []
    seen: set[str] = set()

    def visit(name: str, chain: tuple[str, ...]) -> None:
        name = name.replace("-", "_")
        if name in seen or name in builtin:
            return
        if name not in index:
            raise SystemExit(f"kernel module {name} (needed by {' <- '.join(chain) or 'the peer'}) "
                             f"is neither in {moddir} nor built in")
        seen.add(name)
        for dep in modinfo_depends(index[name]):
            visit(dep, chain + (name,))
        order.append(index[name])

    for m in wanted:
        visit(m, ())
    return order


def needed(elf: Path) -> list[str]:
    out = run(["readelf", "-d", str(elf)])
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def interpreter(elf: Path) -> str | None:
    m = re.search(r"Requesting program interpreter: ([^\]]+)\]", run(["readelf", "-l", str(elf)]))
    return m.group(1) if m else None


def find_lib(stage: Path, soname: str) -> Path:
    for d in LIB_DIRS:
        p = stage / d / soname
        if p.exists() or p.is_symlink():
            return p
    raise SystemExit(f"shared library {soname} is in none of the downloaded packages ({stage})")


def copy_file(src: Path, stage: Path, root: Path) -> None:
    """Copies src (inside stage) to the same path under root, following a symlink chain."""
    rel = src.relative_to(stage)
    dst = root / rel
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.is_symlink():
        target = os.readlink(src)
        if not dst.exists() and not dst.is_symlink():
            os.symlink(target, dst)
        nxt = (src.parent / target) if not os.path.isabs(target) else stage / target.lstrip("/")
        copy_file(nxt, stage, root)
    elif not dst.exists():
        shutil.copy2(src, dst)


def build(args) -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    kpkg = args.kernel_package or newest_kernel_package()
    debs_dir = CACHE / "debs"
    debs = download([kpkg] + TOOLS, debs_dir)
    stage = CACHE / "stage"
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir()
    for deb in debs.values():
        run(["dpkg-deb", "-x", str(deb), str(stage)])
    # Debian 12 is usrmerged at install time; the packages may still ship /lib, /bin paths.
    release = next((stage / "lib" / "modules").iterdir()).name if (stage / "lib" / "modules").exists() \
        else next((stage / "usr" / "lib" / "modules").iterdir()).name
    moddir = stage / "lib" / "modules" / release
    if not moddir.exists():
        moddir = stage / "usr" / "lib" / "modules" / release

    root = CACHE / "root"
    if root.exists():
        shutil.rmtree(root)
    for d in ("bin", "sbin", "etc", "proc", "sys", "dev", "run", "tmp", "var/run", "usr/bin", "usr/sbin",
              "lib/modules", "root"):
        (root / d).mkdir(parents=True, exist_ok=True)

    # kernel modules, in load order
    mods = module_order(moddir, MODULES)
    (root / "lib" / "modules" / release).mkdir(parents=True)
    lines = []
    for ko in mods:
        shutil.copy2(ko, root / "lib" / "modules" / release / ko.name)
        lines.append(ko.name)
    (root / "etc" / "modules.load").write_text("\n".join(lines) + "\n")

    # busybox and its applets
    bb = stage / "bin" / "busybox"
    shutil.copy2(bb, root / "bin" / "busybox")
    applets = run([str(bb), "--list-full"]).split()
    for a in applets:
        p = root / a
        if not p.exists() and a not in ("linuxrc",):
            p.parent.mkdir(parents=True, exist_ok=True)
            os.symlink("/bin/busybox", p)

    # the tools and their libraries (they replace busybox's applets of the same name)
    libs: set[str] = set()
    queue = []
    for b in BINARIES:
        src = stage / b
        if not src.exists():
            src = stage / "usr" / b
        if not src.exists():
            raise SystemExit(f"{b} is in none of the downloaded packages")
        dst = root / "usr" / "bin" / src.name
        if dst.is_symlink() or dst.exists():
            dst.unlink()
        for other in (root / "bin" / src.name, root / "sbin" / src.name, root / "usr" / "sbin" / src.name):
            if other.is_symlink():
                other.unlink()
        shutil.copy2(src, dst)
        queue.append(src)
        interp = interpreter(src)
        if interp:
            copy_file(stage / interp.lstrip("/") if (stage / interp.lstrip("/")).exists()
                      else find_lib(stage, Path(interp).name), stage, root)
            if not (root / interp.lstrip("/")).exists():
                (root / interp.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
                os.symlink("/" + str(find_lib(stage, Path(interp).name).relative_to(stage)), root / interp.lstrip("/"))
    while queue:
        elf = queue.pop()
        for so in needed(elf):
            if so in libs:
                continue
            libs.add(so)
            p = find_lib(stage, so)
            copy_file(p, stage, root)
            queue.append(p.resolve())

    for name in ("init",):
        shutil.copy2(GUEST / name, root / name)
        os.chmod(root / name, 0o755)
    (root / "etc" / "passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
    (root / "etc" / "group").write_text("root:x:0:\n")
    (root / "etc" / "protocols").write_text("ip 0 IP\nicmp 1 ICMP\ntcp 6 TCP\nudp 17 UDP\n")
    (root / "etc" / "services").write_text("iperf3 5201/tcp\n")

    # pack (sorted names, fixed mtimes: the same packages give the same archive)
    for p in root.rglob("*"):
        os.utime(p, (0, 0), follow_symlinks=False)
    names = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    p = subprocess.run(["cpio", "--quiet", "-o", "-H", "newc", "-R", "0:0", "--reproducible"], cwd=root,
                       input=("\n".join(names) + "\n").encode(), capture_output=True)
    if p.returncode != 0:
        raise SystemExit(f"cpio failed: {p.stderr.decode()[-2000:]}")
    out = CACHE / "base.cpio.gz"
    with gzip.GzipFile(out, "wb", mtime=0) as f:
        f.write(p.stdout)
    shutil.copy2(stage / "boot" / f"vmlinuz-{release}", CACHE / "vmlinuz")
    versions = {name: deb.name.split("_")[1].replace("%3a", ":") for name, deb in sorted(debs.items())}
    meta = {"kernel_package": kpkg, "kernel_release": release, "packages": versions,
            "modules": [m.name for m in mods], "libraries": sorted(libs)}
    (CACHE / "image.json").write_text(json.dumps(meta, indent=1) + "\n")
    shutil.rmtree(stage)
    print(f"guest image: {out} ({out.stat().st_size / 1e6:.1f} MB), kernel {release} ({kpkg} {versions[kpkg]})")
    return out


def image_ready() -> bool:
    return all((CACHE / f).exists() for f in ("base.cpio.gz", "vmlinuz", "image.json"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel-package", help="a linux-image-6.1.0-*-cloud-amd64-unsigned package name")
    ap.add_argument("--force", action="store_true", help="rebuild even if cache/ holds an image")
    args = ap.parse_args()
    if image_ready() and not args.force and not args.kernel_package:
        print(f"guest image present in {CACHE} (--force rebuilds): {json.loads((CACHE / 'image.json').read_text())['kernel_package']}")
        return 0
    for tool in ("apt-get", "dpkg-deb", "readelf", "cpio"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} not found: the image is built on Debian 12 with apt, dpkg, binutils and cpio")
    build(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
