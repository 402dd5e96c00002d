/** A frame's model budget, for its GM: this minute's calls and tokens against the limits. */
import { http } from './http'

export interface FrameBudget {
  calls: number
  /** 0: no limit. */
  calls_limit: number
  tokens: number
  tokens_limit: number
  /** AI seats and interrupt-woken passes wait: the frame used its background share. */
  ai_paused: boolean
  /** Players' windows wait too: the frame used its whole budget this minute. */
  players_paused: boolean
  /** Windows past their time, waiting for the budget to free. */
  waiting_windows: number
  /** Seconds until this minute's count rolls on. */
  rolls_in: number
}

export const getFrameBudget = (frameId: string) =>
  http.get<FrameBudget>(`/api/frames/${encodeURIComponent(frameId)}/budget`)
