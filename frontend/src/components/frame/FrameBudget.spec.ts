import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { FrameBudget as Budget } from '@/api/frameBudget'
import FrameBudget from './FrameBudget.vue'

const getFrameBudget = vi.fn<(frameId: string) => Promise<Budget>>()
vi.mock('@/api/frameBudget', () => ({ getFrameBudget: (id: string) => getFrameBudget(id) }))

const budget = (over: Partial<Budget> = {}): Budget => ({
  calls: 12,
  calls_limit: 240,
  tokens: 34_000,
  tokens_limit: 1_000_000,
  ai_paused: false,
  players_paused: false,
  waiting_windows: 0,
  rolls_in: 30,
  ...over,
})

afterEach(() => {
  getFrameBudget.mockReset()
  vi.useRealTimers()
})

describe('FrameBudget', () => {
  it('shows the calls and tokens of this minute against the limits', async () => {
    getFrameBudget.mockResolvedValue(budget())
    const w = mount(FrameBudget, { props: { frameId: 'f1' } })
    await flushPromises()
    expect(getFrameBudget).toHaveBeenCalledWith('f1')
    expect(w.find('[data-testid="budget-calls"]').text()).toBe('12 / 240')
    expect(w.find('[data-testid="budget-tokens"]').text()).toBe('34K / 1M')
    expect(w.find('[data-testid="budget-ai-paused"]').exists()).toBe(false)
    w.unmount()
  })

  it('says AI is paused, and how many windows wait, when the budget is spent', async () => {
    getFrameBudget.mockResolvedValue(budget({ calls: 130, ai_paused: true, waiting_windows: 2 }))
    const w = mount(FrameBudget, { props: { frameId: 'f1' } })
    await flushPromises()
    expect(w.find('[data-testid="budget-ai-paused"]').text()).toBe('AI paused: budget')
    expect(w.find('[data-testid="budget-waiting"]').text()).toContain('2 windows wait')
    w.unmount()
  })

  it('reads the budget again while shown, and stops once gone', async () => {
    vi.useFakeTimers()
    getFrameBudget.mockResolvedValue(budget())
    const w = mount(FrameBudget, { props: { frameId: 'f1', refreshMs: 1000 } })
    await flushPromises()
    await vi.advanceTimersByTimeAsync(2000)
    expect(getFrameBudget).toHaveBeenCalledTimes(3)
    w.unmount()
    await vi.advanceTimersByTimeAsync(5000)
    expect(getFrameBudget).toHaveBeenCalledTimes(3)
  })

  it('shows nothing until the GM has a reading (a player gets 403)', async () => {
    getFrameBudget.mockRejectedValue(new Error('403'))
    const w = mount(FrameBudget, { props: { frameId: 'f1' } })
    await flushPromises()
    expect(w.find('[data-testid="frame-budget"]').exists()).toBe(false)
    w.unmount()
  })
})
