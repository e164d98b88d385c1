#!/bin/sh
# Produce one input set of the study (README "Running the study"), pinned to
# core 0, into directory $1.
set -e
D=$1; mkdir -p "$D"
B=build-ilp/bench/cachenet-bench-ilp
taskset -c 0 build-ilp/tools/memsig/memsig --quick --json $D/memsig.json
taskset -c 0 $B --benchmark_filter='ilp/(copy\+bswap32\+pes\+csum|bswap32\+pes\+csum|copy\+syn[^/]*o110|syn[^/]*o110)-(seq|int)(-scalar)?/(1460|65536)-(hot|l2|l3|cold)(/|$)' \
   --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true \
   --benchmark_format=json --benchmark_out=$D/table.json >/dev/null
taskset -c 0 $B --benchmark_filter='ilp/syn\.n[0-9]\.s[0-9]+\.a10-(seq|int)(-scalar)?/1460-hot$' \
   --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true \
   --benchmark_format=json --benchmark_out=$D/sweep.json >/dev/null
LD_BIND_NOW=1 taskset -c 0 $B --cn_sim --benchmark_filter='ilp/((copy\+)?(bswap32\+pes\+csum|syn\.n3\.s0_1_1[^-]*)|syn\.n[0-9]\.s[0-9]+\.a10)-(seq|int)(-scalar)?/1460-hot$' \
   --benchmark_min_time=0.0005 --benchmark_format=json --benchmark_out=$D/sim.json >/dev/null
taskset -c 0 python3 ilp/probe.py --json $D/probe.json >/dev/null
echo done $(date -u)
