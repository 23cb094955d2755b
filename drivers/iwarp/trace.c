// SPDX-License-Identifier: GPL-2.0
/* The one place iWARP's tracepoints (trace.h) are defined. */
#include "../core/transport.h"

#define CREATE_TRACE_POINTS
#include "trace.h"
