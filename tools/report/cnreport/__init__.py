# SPDX-License-Identifier: BSD-2-Clause
"""cnreport: the studies behind cachenet-report, one module per group.

  util      running programs, the measurement cache, tables, figures
  machine   the machine description (CPU, caches, TSC, measured core clock)
  papers    the papers' numbers printed beside ours, and how each is cited
  targets   every target the report judges, in one table
  memkern   studies 1-3: memory signature, kernels, buffers
  net       studies 4-7: per-payload, hot/ideal caches, sensitivity, DCA
  ilplayout studies 8-9: ILP, code layout
  compare   ratios between two reports
  plot      renders figure JSON to PNG (run by a Python with matplotlib)
"""
