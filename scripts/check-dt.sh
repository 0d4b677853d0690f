#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Device-tree checks with Debian's dt-schema and dtc:
#   check-dt.sh bindings    dt-doc-validate every binding (no output allowed)
#   check-dt.sh examples    compile each binding's examples, dt-validate them
#   check-dt.sh overlays    compile every dts/overlays/*.dtso, zero warnings,
#                           apply it with fdtoverlay to the board's real DTB
#                           from Debian's linux-image package (given the
#                           symbols it lacks by dt-add-symbols.py) and
#                           dt-validate the NPU nodes of the result; a board
#                           the package has no DTB for (RK3576: Linux 6.13+)
#                           gets a stub base tree, and the line says so
# The dt-bindings headers come from the Debian linux-headers-*-common tree.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
kroot=$build/kernel-pkgs
kver=$(cat "$kroot/.version")
inc=$kroot/arm64/usr/src/linux-headers-$kver-common/include
bindings=$top/dts/bindings
# Mainline's board DTBs as Debian ships them (built without -@).
dtbdir=$kroot/arm64/usr/lib/linux-image-$kver-arm64/rockchip
out=$build/dts
mkdir -p "$out"

cpp_dts() {
	cpp -nostdinc -undef -x assembler-with-cpp -D__DTS__ -I "$inc" "$1"
}

# dt-doc-validate exits 0 on some findings: any output is a failure.
bindings() {
	local f msg rc=0
	for f in "$bindings"/*/*.yaml; do
		msg=$(dt-doc-validate -u "$bindings" "$f" 2>&1) || rc=1
		[ -z "$msg" ] || { echo "$msg"; rc=1; }
		echo "validated $(basename "$f")"
	done
	return $rc
}

examples() {
	local f name msg
	dt-mk-schema -j -o "$out/processed-schema.json" "$bindings"
	for f in "$bindings"/*/*.yaml; do
		name=$(basename "$f" .yaml)
		dt-extract-example "$f" > "$out/$name.example.dts"
		cpp_dts "$out/$name.example.dts" > "$out/$name.example.pp.dts"
		dtc -q -I dts -O dtb -o "$out/$name.example.dtb" "$out/$name.example.pp.dts"
		msg=$(dt-validate -s "$out/processed-schema.json" "$out/$name.example.dtb" 2>&1)
		[ -z "$msg" ] || { echo "$msg"; return 1; }
		echo "example of $name valid"
	done
}

# For a board the package has no DTB of: the labels its tree would give.
stub_base() {
	cat <<-EOF
	/dts-v1/;
	/ {
		model = "stub"; compatible = "rockchip,$1";
		#address-cells = <2>; #size-cells = <2>;
		interrupt-parent = <&gic>;
		gic: interrupt-controller { interrupt-controller; #interrupt-cells = <$2>; };
		cru: clock-controller { #clock-cells = <1>; #reset-cells = <1>; };
		scmi_clk: clock-scmi { #clock-cells = <1>; };
		power: power-controller { #power-domain-cells = <1>; };
		vdd_npu_s0: regulator-npu { compatible = "regulator-fixed";
			regulator-name = "vdd_npu_s0"; };
	};
	EOF
}

# The base tree for overlay $1 (BOARD-npu): Debian's BOARD.dtb with the
# symbols the overlay uses added, or a stub. Prints what it is.
overlay_base() {
	local name=$1 board=${1%-npu} soc=${1%%-*} cells=3
	if [ -f "$dtbdir/$board.dtb" ]; then
		/usr/bin/python3 "$top/scripts/dt-add-symbols.py" "$dtbdir/$board.dtb" \
			"$out/$board.base.dtb" > /dev/null
		echo "Debian's $board.dtb ($kver)"
		return
	fi
	[ "$soc" = rk3588 ] && cells=4
	stub_base "$soc" "$cells" > "$out/$board.stub.dts"
	dtc -q -@ -I dts -O dtb -o "$out/$board.base.dtb" "$out/$board.stub.dts"
	echo "a stub base (Debian's $kver has no $board.dtb)"
}

overlay_apply() {
	local name=$1 board=${1%-npu}
	fdtoverlay -i "$out/$board.base.dtb" -o "$out/$name.applied.dtb" "$out/$name.dtbo"
	dt-validate -l rknn-core -s "$out/processed-schema.json" "$out/$name.applied.dtb"
}

overlays() {
	local f name msg base
	dt-mk-schema -j -o "$out/processed-schema.json" "$bindings"
	for f in "$top"/dts/overlays/*.dtso; do
		name=$(basename "$f" .dtso)
		cpp_dts "$f" > "$out/$name.pp.dtso"
		msg=$(dtc -@ -I dts -O dtb -o "$out/$name.dtbo" "$out/$name.pp.dtso" 2>&1)
		[ -z "$msg" ] || { echo "$msg"; return 1; }
		base=$(overlay_base "$name") || return 1
		msg=$(overlay_apply "$name" 2>&1)
		[ -z "$msg" ] || { echo "$msg"; return 1; }
		echo "$name.dtbo: $(stat -c %s "$out/$name.dtbo") bytes, applies to $base, NPU nodes valid"
	done
}

case "${1:-}" in
bindings | examples | overlays) "$1" ;;
*) echo "usage: $0 bindings|examples|overlays" >&2; exit 2 ;;
esac
