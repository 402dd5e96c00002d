/** Reconnect delays: exponential growth, capped, with jitter so many tabs do not reconnect in step. */

export interface BackoffOptions {
  baseMs?: number
  maxMs?: number
  random?: () => number
}

/**
 * Delay before reconnect attempt `attempt` (0 for the first retry).
 * Returns a value in [cap/2, cap] where cap = min(maxMs, baseMs * 2^attempt).
 */
export function backoffDelay(attempt: number, { baseMs = 500, maxMs = 15_000, random = Math.random }: BackoffOptions = {}): number {
  const cap = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt))
  return Math.round(cap / 2 + (cap / 2) * random())
}
