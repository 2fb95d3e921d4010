#!/usr/bin/env bash
# Instructions per kernel call, scalar vs MVE, for the icount_bench.cpp workloads:
#   tests/baremetal/cortex_m/icount_bench.sh build-m55 path/to/libqemu_icount.so
# (the plugin is tools/qemu_icount). Prints one markdown table row per workload.
set -euo pipefail
build=${1:?build-m55 directory}
plugin=${2:?libqemu_icount.so}
names=("conv 3x3 16x16x32->32" "conv 1x1 16x16x64->64" "depthwise 3x3 16x16x64" "linear 640->128")
macs=(2359296 1048576 147456 81920)
count() {
  local elf=$build/tests/baremetal/cortex_m/cortex_m_icount_op$1_mve$2.elf
  local b e
  b=$(arm-none-eabi-nm "$elf" | awk '/ board_icount_begin$/{print $1}')
  e=$(arm-none-eabi-nm "$elf" | awk '/ board_icount_end$/{print $1}')
  qemu-system-arm -M mps3-an547 -nographic -semihosting -kernel "$elf" \
    -plugin "$plugin,begin=0x$b,end=0x$e" -d plugin 2>&1 | sed -n 's/.*inference=\([0-9]*\).*/\1/p'
}
echo "| workload | MACs | scalar instructions | MVE instructions | MVE speed-up | MVE MACs/instruction |"
echo "|---|---|---|---|---|---|"
for op in 0 1 2 3; do
  s=$(count $op 0)
  v=$(count $op 1)
  awk -v n="${names[$op]}" -v m="${macs[$op]}" -v s="$s" -v v="$v" \
    'BEGIN { printf "| %s | %d | %d | %d | %.1fx | %.2f |\n", n, m, s, v, s / v, m / v }'
done
