#!/usr/bin/env bash
# Compiles dumbbell.cc against the headers and shared libraries of the `ns3` PyPI wheel
# (ns3==3.44.post0) installed in a virtual environment, producing build/dumbbell.
#
#   bench/peer/build.sh                                  (the venv at <repository>/venv-ns3)
#   NS3_VENV=/path/to/venv bench/peer/build.sh           (any venv holding the ns3 wheel)
#   NS3_ROOT=/path/to/site-packages/ns3 bench/peer/build.sh   (or point at the wheel directly)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${NS3_VENV:-$repo/venv-ns3}"
root="${NS3_ROOT:-}"
if [[ -z "$root" ]]; then
    if [[ ! -x "$venv/bin/python" ]]; then
        if [[ -z "${NS3_VENV:-}" ]]; then
            echo "build.sh: NS3_VENV is not set and the default venv $venv does not exist." >&2
        else
            echo "build.sh: NS3_VENV=$venv is not a virtual environment (no bin/python)." >&2
        fi
        echo "Install the ns-3 wheel into a venv and name it (bench/peer/README.md):" >&2
        echo "  python3 -m venv $venv && $venv/bin/pip install ns3==3.44.post0" >&2
        echo "  NS3_VENV=$venv bash bench/peer/build.sh" >&2
        exit 2
    fi
    # The wheel installs a top-level `ns3` directory with include/ and lib64/ in site-packages.
    root="$("$venv/bin/python" - <<'PY'
import pathlib, sysconfig
print(pathlib.Path(sysconfig.get_paths()["purelib"]) / "ns3")
PY
)"
fi
inc="$root/include"
lib="$root/lib64"
if [[ ! -f "$inc/ns3/core-module.h" || ! -d "$lib" ]]; then
    echo "build.sh: $root does not look like the ns3 wheel (no include/ns3/core-module.h or lib64/)" >&2
    exit 2
fi
ver="$(ls "$lib" | sed -n 's/^libns3\.\([0-9.]*\)-core\.so$/\1/p' | head -n1)"
[[ -n "$ver" ]] || { echo "build.sh: no libns3.*-core.so in $lib" >&2; exit 2; }
mods=(core network internet point-to-point applications traffic-control stats bridge mobility)
libs=()
for m in "${mods[@]}"; do
    [[ -f "$lib/libns3.$ver-$m.so" ]] && libs+=("-lns3.$ver-$m")
done
mkdir -p "$here/build"
set -x
g++ -O2 -std=c++20 -I"$inc" "$here/dumbbell.cc" -o "$here/build/dumbbell" \
    -L"$lib" "${libs[@]}" -Wl,-rpath,"$lib" -Wl,--disable-new-dtags -lpthread
