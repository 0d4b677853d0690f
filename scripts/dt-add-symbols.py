#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Give a board DTB the symbols dts/overlays/*.dtso refer to.

Distribution DTBs (Debian's among them) are built without -@, so they have
no /__symbols__ and fdtoverlay cannot resolve an overlay's references to the
board's nodes. This adds the labels the overlays use, each found in the DTB
by what the node is (its compatible or regulator name), never by a guessed
path, and fails when one is missing:

    dt-add-symbols.py BOARD.dtb OUT.dtb

A label the DTB already has is left as it is. Uses Debian's python3-libfdt,
which dt-schema (scripts/deps.sh) depends on.
"""
import os
import sys

import libfdt

# label: (property, value) that identifies the node; first match wins.
RULES = {
    "gic": [("compatible", "arm,gic-v3")],
    "cru": [("compatible", "rockchip,rk3588-cru"), ("compatible", "rockchip,rk3576-cru")],
    "power": [("compatible", "rockchip,rk3588-power-controller"),
              ("compatible", "rockchip,rk3576-power-controller")],
    "vcc5v0_sys": [("regulator-name", "vcc5v0_sys")],
}


def strings(fdt, off, name):
    prop = fdt.getprop(off, name, libfdt.QUIET_NOTFOUND)
    if isinstance(prop, int):
        return []
    return [s.decode() for s in bytes(prop).split(b"\0") if s]


def nodes(fdt):
    """Every node as (offset, path), in tree order."""
    off, depth, names = 0, 0, []
    while True:
        names[max(depth - 1, 0):] = [fdt.get_name(off)] if depth else []
        yield off, "/" + "/".join(names)
        try:
            off, depth = fdt.next_node(off, depth)
        except libfdt.FdtException:
            return
        if depth <= 0:
            return


def find(fdt, rules):
    for name, value in rules:
        for off, path in nodes(fdt):
            if value in strings(fdt, off, name):
                return path
    return None


def scmi_clk(fdt):
    """The SCMI clock protocol (0x14) under the SCMI firmware node."""
    for off, path in nodes(fdt):
        if any(c.startswith("arm,scmi") for c in strings(fdt, off, "compatible")):
            sub = fdt.subnode_offset(off, "protocol@14", libfdt.QUIET_NOTFOUND)
            if sub >= 0:
                return path + "/protocol@14"
    return None


def main(src, dst):
    with open(src, "rb") as f:
        fdt = libfdt.Fdt(f.read())
    fdt.resize(fdt.totalsize() + 4096)
    paths = {label: find(fdt, rules) for label, rules in RULES.items()}
    paths["scmi_clk"] = scmi_clk(fdt)
    if paths["scmi_clk"] is None and "rk3576" in " ".join(strings(fdt, 0, "compatible")):
        del paths["scmi_clk"]      # RK3576's NPU clock is the CRU's
    if paths["vcc5v0_sys"] is None:
        del paths["vcc5v0_sys"]    # only the Sige7 overlay's NPU rail needs it
    missing = [label for label, path in paths.items() if path is None]
    if missing:
        return f"{src}: no node for {', '.join(missing)}"
    sym = fdt.path_offset("/__symbols__", libfdt.QUIET_NOTFOUND)
    if sym < 0:
        sym = fdt.add_subnode(0, "__symbols__")
    for label, path in sorted(paths.items()):
        if isinstance(fdt.getprop(sym, label, libfdt.QUIET_NOTFOUND), int):
            fdt.setprop_str(sym, label, path)
            print(f"{label} = {path}")
    fdt.pack()
    with open(dst, "wb") as f:
        f.write(fdt.as_bytearray())
    return None


if __name__ == "__main__":
    error = "usage: dt-add-symbols.py BOARD.dtb OUT.dtb"
    if len(sys.argv) == 3:
        error = main(sys.argv[1], sys.argv[2])
    if error:
        print(error, file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    # Debian's libfdt binding aborts at interpreter shutdown ("none_dealloc"):
    # leave without tearing it down.
    os._exit(1 if error else 0)
