/* SPDX-License-Identifier: BSD-2-Clause */
/* Cold code only: ~32 KB that sits between the hot files in link order. */
#include "cordtest.h"

CT_COLD(pad1_a)
CT_COLD(pad1_b)
