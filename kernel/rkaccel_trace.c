// SPDX-License-Identifier: GPL-2.0-only
/* Instantiates the tracepoints of rkaccel_trace.h. */
#define CREATE_TRACE_POINTS
#include "rkaccel_trace.h"
