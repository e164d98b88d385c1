# SPDX-License-Identifier: BSD-2-Clause
"""The ILP study's performance model, one idea per module:

  equations  the paper's equations (1)-(3) and the machine's memory costs
             from memsig (Machine)
  kernels    the generated kernels' shape: register width, loops, levels,
             the pipeline behind a benchmark name
  overlap    the overlap form: eq. (3)'s terms per loop, combined by max()
  core       the core's rates, latencies and window from ilp/probe.py
  objcode    the object-code walk: objdump parser, x86 operand parser,
             compiled loops' counts, a call's walk
  dfcore     the dataflow core: an out-of-order dispatch simulation
  fit        what is fitted to measurements: R, CPI, efficiency, scheduler
  cli        the command line (ilp/model.py)

The names below are the package's interface (ilp/test_ilpgen.py uses them).
"""

from .core import LATER_PASSES, Core
from .dfcore import (WIN_OVERHEAD, dataflow, sim_dispatch, sim_win, whole_path,
                       win_stream)
from .equations import (Machine, Model, clocks, compute_instr, da, da_ilp, da_seq, memory_term,
                        sa, sa_ilp, sa_seq)
from .fit import (CALIB_ROW, KNEE_READS, RETIRE_GRID, SCHED_GRID, calibrate_cpi,
                  calibrate_efficiency, fit_sched, probe_R)
from .kernels import (NAME, STATE_LEVEL, WIDTH, hot_level, load_bench, loops, pipeline_fns,
                      pipeline_of, unroll_bytes)
from .objcode import (kernel_loops, loop_stats, objdump_bodies, objdump_loops, objdump_paths,
                      parse_insn, probe_R_objdump, read_objdump, walk_call)
from .overlap import (LINE, add_largest, call_extra, first_loop_overlap, fn_xpath,
                      later_pass_extra, loop_path, loop_terms, predict_overlap, remainder_cycles)
from .cli import main
