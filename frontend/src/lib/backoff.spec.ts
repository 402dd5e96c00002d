import { describe, expect, it } from 'vitest'
import { backoffDelay } from './backoff'

describe('backoffDelay', () => {
  it('doubles per attempt with jitter in [cap/2, cap]', () => {
    expect(backoffDelay(0, { baseMs: 500, random: () => 0 })).toBe(250)
    expect(backoffDelay(0, { baseMs: 500, random: () => 1 })).toBe(500)
    expect(backoffDelay(3, { baseMs: 500, random: () => 1 })).toBe(4000)
  })

  it('is capped', () => {
    expect(backoffDelay(30, { baseMs: 500, maxMs: 15_000, random: () => 1 })).toBe(15_000)
    expect(backoffDelay(30, { baseMs: 500, maxMs: 15_000, random: () => 0 })).toBe(7500)
  })
})
