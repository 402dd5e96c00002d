import { flushPromises, mount, RouterLinkStub } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { onUnauthorized } from '@/api/http'
import * as api from '@/api/productions'
import { makeDetail, makeTurn } from '@/test/factories'
import ProductionView from './ProductionView.vue'

vi.mock('@/api/productions', () => ({
  productionsApi: {},
  getProduction: vi.fn(),
  createTurn: vi.fn(),
  stopTurn: vi.fn(),
  setHead: vi.fn(() => Promise.resolve({ turn: '' })),
  startAutoplay: vi.fn(),
  stopAutoplay: vi.fn(),
  productionSocketUrl: (id: string) => `ws://test/ws/productions/${id}/`,
}))

class FakeSocket {
  static last: FakeSocket | null = null
  readyState = 0
  onopen: (() => void) | null = null
  onmessage: ((e: { data: string }) => void) | null = null
  onclose: ((e: { code: number }) => void) | null = null
  onerror: (() => void) | null = null
  constructor(readonly url: string) {
    FakeSocket.last = this
  }
  send() {}
  close() {
    this.readyState = 3
  }
  push(msg: unknown) {
    this.onmessage?.({ data: JSON.stringify(msg) })
  }
}

const q = (id: string) => `[data-testid="${id}"]`
const at = (s: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, s)).toISOString()

describe('ProductionView', () => {
  beforeEach(() => {
    vi.stubGlobal('WebSocket', FakeSocket)
    setActivePinia(createPinia())
    vi.clearAllMocks()
  })
  afterEach(() => vi.unstubAllGlobals())

  async function mountView(detail = makeDetail()) {
    vi.mocked(api.getProduction).mockResolvedValue(detail)
    const w = mount(ProductionView, {
      props: { id: 'prod1' },
      global: { plugins: [createPinia()], stubs: { RouterLink: RouterLinkStub } },
    })
    await flushPromises()
    return w
  }

  it('hands a socket closed for a lost session (4401) to the session check', async () => {
    const seen: number[] = []
    onUnauthorized((status) => seen.push(status))
    await mountView()
    FakeSocket.last!.onclose?.({ code: 4401 })
    await flushPromises()
    expect(seen).toEqual([401])
    onUnauthorized(null)
  })

  it('shows the header, the cast play buttons and an empty transcript', async () => {
    const w = await mountView()
    expect(w.find(q('production-world')).text()).toContain('Modern NYC')
    expect(w.find(q('production-scenario')).text()).toContain('First Therapy Session')
    expect(w.findAll(q('cast-play')).map((b) => b.attributes('aria-label'))).toEqual(['Play Alice', 'Play Bob'])
    expect(w.find(q('transcript-empty')).exists()).toBe(true)
    expect(FakeSocket.last?.url).toBe('ws://test/ws/productions/prod1/')
    expect(w.find(q('connection-status')).attributes('data-status')).toBe('connecting')
  })

  it('plays an assistant and streams its reply token by token', async () => {
    const w = await mountView(makeDetail({ event_seq: 4 }))
    expect(api.getProduction).toHaveBeenCalledTimes(1) // read at once, before the socket is up
    FakeSocket.last!.readyState = 1
    FakeSocket.last!.onopen?.()
    FakeSocket.last!.push({ type: 'ready' })
    await flushPromises()
    expect(api.getProduction).toHaveBeenCalledTimes(2) // and again once the socket has joined
    expect(w.find(q('connection-status')).attributes('data-status')).toBe('open')

    vi.mocked(api.createTurn).mockResolvedValue(makeTurn({ id: 'n1', assistant: 'as2', speaker_name: 'Bob', status: 'pending', created_at: at(1) }))
    await w.findAll(q('cast-play'))[1]!.trigger('click')
    await flushPromises()
    expect(api.createTurn).toHaveBeenCalledWith('prod1', { assistant: 'as2', parent: null })
    expect(w.find(q('turn-item')).attributes('data-status')).toBe('pending')
    expect(w.find(q('turn-typing')).exists()).toBe(true)
    // Playing again while a turn is generating is blocked.
    expect((w.find(q('turn-next')).element as HTMLButtonElement).disabled).toBe(true)

    FakeSocket.last!.push({ type: 'turn.token', turn: 'n1', index: 0, delta: 'Good ' })
    FakeSocket.last!.push({ type: 'turn.token', turn: 'n1', index: 1, delta: 'afternoon' })
    FakeSocket.last!.push({ type: 'turn.token', turn: 'n1', index: 1, delta: 'afternoon' }) // a duplicate
    await flushPromises()
    expect(w.find(q('turn-content')).text()).toBe('Good afternoon')
    expect(w.find(q('turn-item')).attributes('data-status')).toBe('streaming')
    expect(w.find(q('turn-stop')).exists()).toBe(true)

    FakeSocket.last!.push({
      type: 'turn.done',
      seq: 5,
      turn: makeTurn({ id: 'n1', assistant: 'as2', speaker_name: 'Bob', content: 'Good afternoon.', status: 'done', created_at: at(1) }),
    })
    await flushPromises()
    expect(w.find(q('turn-item')).attributes('data-status')).toBe('done')
    expect(w.find(q('turn-typing')).exists()).toBe(false)
    expect((w.find(q('turn-next')).element as HTMLButtonElement).disabled).toBe(false)
    expect(api.getProduction).toHaveBeenCalledTimes(2)
  })

  it('says when a lost worker makes a turn be written again', async () => {
    const live = makeTurn({ id: 'n1', status: 'streaming', content: 'Half a', token_count: 2, created_at: at(1) })
    const w = await mountView(makeDetail({ event_seq: 4, turns: [live], head: 'n1' }))
    FakeSocket.last!.push({ type: 'ready' })
    await flushPromises()
    FakeSocket.last!.push({ type: 'turn.restarted', seq: 5, attempt: 2, turn: { ...live, status: 'pending', content: '', token_count: 0 } })
    await flushPromises()
    expect(w.find(q('turn-restarted')).text()).toBe('Worker lost — writing again (attempt 2)')
    FakeSocket.last!.push({ type: 'turn.token', turn: 'n1', index: 0, delta: 'A whole' })
    await flushPromises()
    expect(w.find(q('turn-content')).text()).toBe('A whole')
    expect(w.find(q('turn-restarted')).exists()).toBe(true)
    FakeSocket.last!.push({ type: 'turn.done', seq: 6, turn: { ...live, status: 'done', content: 'A whole sentence.', token_count: 2 } })
    await flushPromises()
    expect(w.find(q('turn-restarted')).exists()).toBe(false)
  })

  it('stops for good and says so when access ends (4403: e.g. the production was deleted)', async () => {
    const w = await mountView()
    FakeSocket.last!.onclose?.({ code: 4403 })
    await flushPromises()
    expect(w.find(q('access-ended')).text()).toContain('no longer available')
    expect(w.find(q('connection-status')).attributes('data-status')).toBe('failed')
    expect(w.find(q('connection-status')).text()).toContain('Access ended')
    expect(w.findAll(q('cast-play')).every((b) => (b.element as HTMLButtonElement).disabled)).toBe(true)
  })

  it('switches between sibling branches with the arrows', async () => {
    const turns = [
      makeTurn({ id: 'a', content: 'First take', created_at: at(1) }),
      makeTurn({ id: 'a2', content: 'Second take', created_at: at(2) }),
      makeTurn({ id: 'b', parent: 'a', content: 'Reply to first', created_at: at(3) }),
    ]
    const w = await mountView(makeDetail({ turns, head: 'b' }))
    const texts = () => w.findAll(q('turn-content')).map((c) => c.text())
    expect(texts()).toEqual(['First take', 'Reply to first'])
    expect(w.find(q('sibling-counter')).text()).toBe('1/2')
    await w.find(q('sibling-next')).trigger('click')
    expect(texts()).toEqual(['Second take'])
    expect(w.find(q('sibling-counter')).text()).toBe('2/2')
    await w.find(q('sibling-prev')).trigger('click')
    expect(texts()).toEqual(['First take', 'Reply to first'])
  })

  it('says when the production does not exist', async () => {
    const { ApiError } = await import('@/api/http')
    vi.mocked(api.getProduction).mockRejectedValue(new ApiError(404, 'Not found.'))
    const w = mount(ProductionView, { props: { id: 'gone' }, global: { plugins: [createPinia()], stubs: { RouterLink: RouterLinkStub } } })
    await flushPromises()
    expect(w.find(q('load-error')).text()).toContain('Production not found')
  })
})
