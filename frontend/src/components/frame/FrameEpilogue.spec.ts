import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ApiError } from '@/api/http'
import type { Epilogue, EpilogueView } from '@/api/types'
import FrameEpilogue from './FrameEpilogue.vue'

const getEpilogue = vi.fn<(id: string) => Promise<EpilogueView>>()
const retryPass = vi.fn<(id: string) => Promise<{ id: string; status: string }>>()
vi.mock('@/api/frames', () => ({
  getEpilogue: (id: string) => getEpilogue(id),
  retryPass: (id: string) => retryPass(id),
}))

const q = (id: string) => `[data-testid="${id}"]`
const one = (over: Partial<Epilogue> = {}): Epilogue => ({
  id: 'p-alice',
  seat: 's-alice',
  character: 'Alice Thompson',
  status: 'done',
  text: 'When it is over, *Alice* looks back.',
  narrative: 'n1',
  error: '',
  ...over,
})
const answer = (epilogues: Epilogue[], status: EpilogueView['status']): EpilogueView => ({ status, epilogues })

beforeEach(() => vi.useFakeTimers())
afterEach(() => {
  getEpilogue.mockReset()
  retryPass.mockReset()
  vi.useRealTimers()
})

describe('FrameEpilogue', () => {
  it('shows nothing when the scene closed without an epilogue', async () => {
    getEpilogue.mockResolvedValue(answer([], 'none'))
    const w = mount(FrameEpilogue, { props: { frameId: 'f1' } })
    await flushPromises()
    expect(w.find(q('epilogue')).exists()).toBe(false)
    await vi.advanceTimersByTimeAsync(60_000)
    expect(getEpilogue).toHaveBeenCalledTimes(1) // nothing to wait for
  })

  it('says it is writing, asks again with a growing delay, then shows the text', async () => {
    getEpilogue
      .mockResolvedValueOnce(answer([one({ status: 'pending', text: '', narrative: null })], 'writing'))
      .mockResolvedValueOnce(answer([one({ status: 'running', text: '', narrative: null })], 'writing'))
      .mockResolvedValue(answer([one()], 'done'))
    const w = mount(FrameEpilogue, { props: { frameId: 'f1' } })
    await flushPromises()
    expect(w.find(q('epilogue-writing')).text()).toContain('Writing the epilogue…')
    await vi.advanceTimersByTimeAsync(1000) // the first delay is at most a second
    expect(getEpilogue).toHaveBeenCalledTimes(2)
    await vi.advanceTimersByTimeAsync(2000)
    expect(getEpilogue).toHaveBeenCalledTimes(3)
    const text = w.find(q('epilogue-text'))
    expect(text.text()).toBe('When it is over, Alice looks back.')
    expect(text.find('em').exists()).toBe(true)
    expect(text.attributes('dir')).toBe('auto')
    expect(w.find('h2').text()).toBe('Epilogue') // a player's own: no name needed
    await vi.advanceTimersByTimeAsync(60_000)
    expect(getEpilogue).toHaveBeenCalledTimes(3) // done: no more reads
  })

  it('stops asking after a bounded number of reads and offers to check again', async () => {
    getEpilogue.mockResolvedValue(answer([one({ status: 'pending', text: '' })], 'writing'))
    const w = mount(FrameEpilogue, { props: { frameId: 'f1' } })
    await flushPromises()
    await vi.advanceTimersByTimeAsync(30 * 60_000)
    const reads = getEpilogue.mock.calls.length
    expect(reads).toBeGreaterThan(5)
    expect(reads).toBeLessThanOrEqual(15)
    await vi.advanceTimersByTimeAsync(30 * 60_000)
    expect(getEpilogue.mock.calls.length).toBe(reads)
    await w.find(q('epilogue-check')).trigger('click')
    await flushPromises()
    expect(getEpilogue.mock.calls.length).toBe(reads + 1)
    expect(w.find(q('epilogue-gave-up')).exists()).toBe(false)
  })

  it('tells a player theirs failed, without the reason and without a retry', async () => {
    getEpilogue.mockResolvedValue(answer([one({ status: 'failed', text: '', narrative: null })], 'failed'))
    const w = mount(FrameEpilogue, { props: { frameId: 'f1' } })
    await flushPromises()
    expect(w.find(q('epilogue-failed')).text()).toContain('The GM can try again')
    expect(w.find(q('epilogue-retry')).exists()).toBe(false)
  })

  it('names every character for the GM, and retries a failed one', async () => {
    getEpilogue
      .mockResolvedValueOnce(
        answer([one(), one({ id: 'p-bob', seat: 's-bob', character: 'Bob Wilson', status: 'failed', text: '', error: 'Provider down.' })], 'failed'),
      )
      .mockResolvedValueOnce(answer([one(), one({ id: 'p-bob', character: 'Bob Wilson', status: 'pending', text: '' })], 'writing'))
      .mockResolvedValue(answer([one(), one({ id: 'p-bob', character: 'Bob Wilson', text: 'Bob rests.' })], 'done'))
    retryPass.mockResolvedValue({ id: 'p-bob', status: 'pending' })
    const w = mount(FrameEpilogue, { props: { frameId: 'f1', gm: true } })
    await flushPromises()
    expect(w.findAll('h2').map((h) => h.text())).toEqual(['Epilogue — Alice Thompson', 'Epilogue — Bob Wilson'])
    expect(w.find(q('epilogue-failed')).text()).toContain('Provider down.')
    await w.find(q('epilogue-retry')).trigger('click')
    await flushPromises()
    expect(retryPass).toHaveBeenCalledWith('p-bob')
    expect(w.find(q('epilogue-writing')).exists()).toBe(true)
    await vi.advanceTimersByTimeAsync(1000)
    expect(w.findAll(q('epilogue-text')).map((t) => t.text())).toEqual(['When it is over, Alice looks back.', 'Bob rests.'])
    expect(w.emitted('read')?.length).toBe(3) // the GM's page re-reads its passes each time
  })

  it('says when the epilogue cannot be read, and tries again', async () => {
    getEpilogue.mockRejectedValueOnce(new ApiError(503, 'Server busy.')).mockResolvedValue(answer([one()], 'done'))
    const w = mount(FrameEpilogue, { props: { frameId: 'f1' } })
    await flushPromises()
    expect(w.find(q('epilogue-error')).text()).toContain('Server busy.')
    await vi.advanceTimersByTimeAsync(1000)
    expect(w.find(q('epilogue-text')).exists()).toBe(true)
    expect(w.find(q('epilogue-error')).exists()).toBe(false)
  })
})
