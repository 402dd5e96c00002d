/** A frame's model budget, for its GM: this minute's calls and tokens against the limits. */
import { http } from './http'
import type { FrameBudget } from './types'

export type { FrameBudget }

export const getFrameBudget = (frameId: string) =>
  http.get<FrameBudget>(`/api/frames/${encodeURIComponent(frameId)}/budget`)
