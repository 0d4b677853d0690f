/* SPDX-License-Identifier: GPL-2.0-only */
/* Tracepoints: a job is submitted, starts on a core, is done on a core. */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rkaccel

#if !defined(_RKACCEL_TRACE_H_) || defined(TRACE_HEADER_MULTI_READ)
#define _RKACCEL_TRACE_H_

#include <linux/tracepoint.h>

DECLARE_EVENT_CLASS(rkaccel_job_event,
		    TP_PROTO(u64 fence_ctx, u64 seqno, int core, int error),
		    TP_ARGS(fence_ctx, seqno, core, error),
		    TP_STRUCT__entry(__field(u64, fence_ctx)
				     __field(u64, seqno)
				     __field(int, core)
				     __field(int, error)),
		    TP_fast_assign(__entry->fence_ctx = fence_ctx;
				   __entry->seqno = seqno;
				   __entry->core = core;
				   __entry->error = error;),
		    TP_printk("job=%llu:%llu core=%d error=%d", __entry->fence_ctx,
			      __entry->seqno, __entry->core, __entry->error)
);

DEFINE_EVENT(rkaccel_job_event, rkaccel_submit,
	     TP_PROTO(u64 fence_ctx, u64 seqno, int core, int error),
	     TP_ARGS(fence_ctx, seqno, core, error));

DEFINE_EVENT(rkaccel_job_event, rkaccel_run,
	     TP_PROTO(u64 fence_ctx, u64 seqno, int core, int error),
	     TP_ARGS(fence_ctx, seqno, core, error));

DEFINE_EVENT(rkaccel_job_event, rkaccel_done,
	     TP_PROTO(u64 fence_ctx, u64 seqno, int core, int error),
	     TP_ARGS(fence_ctx, seqno, core, error));

#endif /* _RKACCEL_TRACE_H_ */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rkaccel_trace
#include <trace/define_trace.h>
