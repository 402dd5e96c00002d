import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { FrameCall, FrameCalls } from '@/api/frameCalls'
import { ApiError } from '@/api/http'
import FrameDiagnostics from './FrameDiagnostics.vue'

const getFrameCalls = vi.fn<(frameId: string, before?: number | null) => Promise<FrameCalls>>()
vi.mock('@/api/frameCalls', () => ({ getFrameCalls: (id: string, before?: number | null) => getFrameCalls(id, before) }))

let nextId = 100
const call = (over: Partial<FrameCall> = {}): FrameCall => ({
  id: nextId--,
  purpose: 'synthesis.soft',
  label: 'Reading an intention (soft pass)',
  kind: 'structured',
  pass_id: 'p-soft',
  pass_kind: 'soft',
  outcome_id: null,
  seat: 's-alice',
  character: 'Alice Thompson',
  model_name: 'Offline narrator',
  model_id: 'offline-narrator',
  provider: 'offline',
  provider_label: 'Offline narrator',
  prompt_tokens: 120,
  completion_tokens: 30,
  latency_ms: 850,
  error: '',
  status: 'done',
  started_at: '2026-11-27T03:00:00Z',
  finished_at: '2026-11-27T03:00:01Z',
  ...over,
})
const page = (calls: FrameCall[], over: Partial<FrameCalls> = {}): FrameCalls => ({
  calls,
  next_before: null,
  page_size: 100,
  totals: { calls: calls.length, prompt_tokens: 1200, completion_tokens: 300, errors: 1, latency_ms: 4500, unfinished: 0 },
  queues: [],
  ...over,
})

const mountOpen = (open = true) =>
  mount(FrameDiagnostics, { props: { open, frameId: 'f1' }, global: { stubs: { teleport: true } } })
const rows = (w: ReturnType<typeof mountOpen>) => w.findAll('[data-testid="call-row"]')
type Row = ReturnType<typeof rows>[number]

afterEach(() => {
  getFrameCalls.mockReset()
  nextId = 100
})

describe('FrameDiagnostics', () => {
  it("shows what runs and waits at a model that serves one call at a time, in the order they go", async () => {
    const queues = [
      {
        model: 'Local llama',
        slots: 1,
        running: [{ label: 'Narrating it (flesh)', seconds: 12.5 }],
        waiting: [
          { label: 'Resolving what happened (bones)', seconds: 2 },
          { label: 'Updating the characters’ state', seconds: 9 },
        ],
      },
    ]
    getFrameCalls.mockResolvedValue(page([call()], { queues }))
    const w = mountOpen()
    await flushPromises()
    expect(w.find('[data-testid="model-queue"] h3').text()).toContain('Local llama serves one call at a time')
    expect(w.findAll('[data-testid="queue-running"]').map((r) => r.text())).toEqual(['running Narrating it (flesh) 12.5 s'])
    expect(w.findAll('[data-testid="queue-waiting"]').map((r) => r.text())).toEqual([
      'waiting Resolving what happened (bones) for 2 s',
      'waiting Updating the characters’ state for 9 s',
    ])
  })

  it('reads the calls only once opened, and shows the totals and a row per call, newest first', async () => {
    getFrameCalls.mockResolvedValue(
      page([
        call({ purpose: 'synthesis.flesh', label: 'Narrating it (flesh)', pass_id: 'p-med', pass_kind: 'medium', character: 'Bob Wilson' }),
        call(),
      ]),
    )
    const w = mountOpen(false)
    await flushPromises()
    expect(getFrameCalls).not.toHaveBeenCalled()
    await w.setProps({ open: true })
    await flushPromises()
    expect(getFrameCalls).toHaveBeenCalledWith('f1', undefined)
    expect(w.find('[data-testid="totals-calls"]').text()).toBe('2')
    expect(w.find('[data-testid="totals-tokens"]').text()).toBe('1200 / 300')
    expect(w.find('[data-testid="totals-errors"]').text()).toBe('1')
    expect(w.find('[data-testid="totals-latency"]').text()).toBe('4.5 s')
    const [flesh, soft] = rows(w) as [Row, Row]
    expect(flesh.text()).toContain('Narrating it (flesh)')
    expect(flesh.text()).toContain('Bob Wilson')
    expect(soft.text()).toContain('Alice Thompson')
    expect(soft.find('[data-testid="call-tokens"]').text()).toBe('120 / 30')
    expect(soft.text()).toContain('850 ms')
    expect(soft.find('[data-testid="call-status"]').text()).toBe('ok')
  })

  it('opens a failed row to its real error and leads to its pass; an AI seat’s call has no pass', async () => {
    getFrameCalls.mockResolvedValue(
      page([
        call({ purpose: 'synthesis.ai_act', label: 'AI character acting', pass_id: null, pass_kind: null, character: 'Tony Rosetti' }),
        call({ status: 'failed', error: 'Connection refused by http://127.0.0.1:1/v1', pass_id: 'p-bones', pass_kind: 'medium' }),
      ]),
    )
    const w = mountOpen()
    await flushPromises()
    const [ai, failed] = rows(w) as [Row, Row]
    expect(failed.find('[data-testid="call-status"]').text()).toBe('error')
    expect(w.find('[data-testid="call-detail"]').exists()).toBe(false)
    await failed.find('[data-testid="call-toggle"]').trigger('click')
    expect(failed.find('[data-testid="call-toggle"]').attributes('aria-expanded')).toBe('true')
    const detail = w.find('[data-testid="call-detail"]')
    expect(detail.find('[data-testid="call-error"]').text()).toBe('Connection refused by http://127.0.0.1:1/v1')
    await detail.find('[data-testid="call-pass"]').trigger('click')
    expect(w.emitted('pass')).toEqual([['p-bones']])
    await ai.find('[data-testid="call-toggle"]').trigger('click')
    const details = w.findAll('[data-testid="call-detail"]')
    expect(details).toHaveLength(2)
    expect(details[0]!.find('[data-testid="call-pass"]').exists()).toBe(false)
    // Closed and opened anew: every row closed again, the newest page read again.
    await w.setProps({ open: false })
    await w.setProps({ open: true })
    await flushPromises()
    expect(getFrameCalls).toHaveBeenCalledTimes(2)
    expect(w.find('[data-testid="call-detail"]').exists()).toBe(false)
  })

  it('loads the next page after the last row until there is none', async () => {
    const first = [call(), call()]
    getFrameCalls.mockResolvedValueOnce(page(first, { next_before: first[1]!.id }))
    const older = call({ label: 'OLDEST' })
    getFrameCalls.mockResolvedValueOnce(page([older]))
    const w = mountOpen()
    await flushPromises()
    expect(rows(w)).toHaveLength(2)
    await w.find('[data-testid="calls-more"]').trigger('click')
    await flushPromises()
    expect(getFrameCalls).toHaveBeenLastCalledWith('f1', first[1]!.id)
    expect(rows(w)).toHaveLength(3)
    expect(rows(w)[2]!.text()).toContain('OLDEST')
    expect(w.find('[data-testid="calls-more"]').exists()).toBe(false)
  })

  it('shows a running call with no latency yet, and a refresh reads the newest page again', async () => {
    getFrameCalls.mockResolvedValueOnce(page([call({ status: 'running', latency_ms: null, finished_at: null })]))
    getFrameCalls.mockResolvedValueOnce(page([call({ label: 'NEWER' }), call()]))
    const w = mountOpen()
    await flushPromises()
    expect(rows(w)[0]!.find('[data-testid="call-status"]').text()).toBe('running')
    expect(rows(w)[0]!.text()).toContain('…')
    await w.find('[data-testid="calls-refresh"]').trigger('click')
    await flushPromises()
    expect(getFrameCalls).toHaveBeenCalledTimes(2)
    expect(rows(w)).toHaveLength(2)
    expect(rows(w)[0]!.text()).toContain('NEWER')
  })

  it('says when there is no call yet, and says why a read failed with a way to try again', async () => {
    getFrameCalls.mockResolvedValueOnce(page([], { totals: { calls: 0, prompt_tokens: 0, completion_tokens: 0, errors: 0, latency_ms: 0, unfinished: 0 } }))
    const w = mountOpen()
    expect(w.find('[data-testid="calls-loading"]').exists()).toBe(true)
    await flushPromises()
    expect(w.find('[data-testid="calls-empty"]').exists()).toBe(true)
    expect(w.find('[data-testid="calls-loading"]').exists()).toBe(false)

    getFrameCalls.mockRejectedValueOnce(new ApiError(403, 'Only the frame’s GM can do that.'))
    getFrameCalls.mockResolvedValueOnce(page([call()]))
    await w.find('[data-testid="calls-refresh"]').trigger('click')
    await flushPromises()
    expect(w.find('[data-testid="calls-error"]').text()).toContain('Only the frame’s GM can do that.')
    await w.find('[data-testid="calls-error"] button').trigger('click')
    await flushPromises()
    expect(w.find('[data-testid="calls-error"]').exists()).toBe(false)
    expect(rows(w)).toHaveLength(1)
  })
})
