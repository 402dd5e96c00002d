/** A frame's LLM calls, for its GM's diagnostics: newest first, a page at a time, and the frame's totals. */
import { http } from './http'
import type { FrameCall, FrameCalls, FrameCallStatus, FrameCallTotals, ModelQueue } from './types'

export type { FrameCall, FrameCalls, FrameCallStatus, FrameCallTotals, ModelQueue }

/** A page of calls; `before` is the `next_before` of the page read last (none: the newest). */
export const getFrameCalls = (frameId: string, before?: number | null) =>
  http.get<FrameCalls>(`/api/frames/${encodeURIComponent(frameId)}/calls${before ? `?before=${before}` : ''}`)
