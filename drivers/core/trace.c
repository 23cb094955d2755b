// SPDX-License-Identifier: GPL-2.0
/* The one place the core's tracepoints (trace.h) are defined. */
#include "srdma.h"

#define CREATE_TRACE_POINTS
#include "trace.h"
