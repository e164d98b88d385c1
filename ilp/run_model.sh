#!/bin/sh
# model.py on one input set: run_model.sh DIR [model.py flags...]
D=$1; shift
taskset -c 0 python3 ilp/model.py --memsig $D/memsig.json --bench $D/table.json --bench $D/sweep.json \
   --sim $D/sim.json --probe $D/probe.json --objdump build-ilp/ilp/libcn_ilp_avx512.a \
   --objdump build-ilp/ilp/libcn_ilp_scalar.a "$@"
