import { flushPromises, mount, RouterLinkStub } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import * as api from '@/api/frames'
import { ApiError } from '@/api/http'
import type { SpectatorView } from '@/api/types'
import { FakeSocket } from '@/test/fakeSocket'
import { makeOutcome, makeSeat, makeWindow, SEATS } from '@/test/factories'
import { useAuthStore } from '@/stores/auth'
import SpectateView from './SpectateView.vue'

vi.mock('@/api/frames', () => ({
  getSpectated: vi.fn(),
  spectatorSocketUrl: (code: string) => `ws://test/ws/spectate/${code}/`,
}))

const q = (id: string) => `[data-testid="${id}"]`

function view(over: Partial<SpectatorView> = {}): SpectatorView {
  return {
    id: 'frame1',
    name: 'Night at the docks',
    production_name: 'Harbour Noir',
    status: 'open',
    mode: 'per_character',
    tempo: 1,
    seq: 5,
    seats: [makeSeat({ id: SEATS.alice, name: 'Alice' }), makeSeat({ id: SEATS.bob, name: 'Bob' })],
    outcomes: [makeOutcome({ id: 'o1', seq: 3 })],
    windows: [],
    ...over,
  }
}

const mountView = () => mount(SpectateView, { props: { code: 'watch1' }, global: { stubs: { RouterLink: RouterLinkStub } } })

describe('SpectateView', () => {
  beforeEach(() => {
    setActivePinia(createPinia())
    useAuthStore().user = { id: 1, username: 'watcher', email: 'w@example.com' }
    vi.stubGlobal('WebSocket', FakeSocket)
    vi.clearAllMocks()
  })
  afterEach(() => vi.unstubAllGlobals())

  it('shows the table and the outcomes, and takes new ones as they come despite holes in seq', async () => {
    vi.mocked(api.getSpectated).mockResolvedValue(view())
    const w = mountView()
    await flushPromises()
    FakeSocket.last!.open()
    await flushPromises()
    expect(FakeSocket.last!.url).toBe('ws://test/ws/spectate/watch1/')
    expect(w.find(q('spectate-name')).text()).toBe('Night at the docks')
    expect(w.findAll(q('seat-item'))).toHaveLength(2)
    expect(w.findAll(q('spectate-feed') + ' > *').length).toBe(1)
    const calls = vi.mocked(api.getSpectated).mock.calls.length

    // Liquid, narratives and talk never come; an outcome 4 numbers later is simply applied.
    FakeSocket.last!.push({ type: 'window.opened', seq: 7, window: makeWindow({ id: 'w1', seat: SEATS.bob }) })
    FakeSocket.last!.push({ type: 'outcome.created', seq: 9, outcome: makeOutcome({ id: 'o2', seq: 9 }) })
    FakeSocket.last!.push({ type: 'outcome.created', seq: 9, outcome: makeOutcome({ id: 'o2', seq: 9 }) })
    await flushPromises()
    expect(w.findAll(q('spectate-feed') + ' > *').length).toBe(2)
    expect(vi.mocked(api.getSpectated).mock.calls.length).toBe(calls) // no re-read for a hole
  })

  it('never says who is here or away: spectators are not told presence', async () => {
    vi.mocked(api.getSpectated).mockResolvedValue(view())
    const w = mountView()
    await flushPromises()
    FakeSocket.last!.open()
    await flushPromises()
    expect(w.findAll(q('seat-item'))).toHaveLength(2)
    expect(w.find(q('seat-online')).exists()).toBe(false)
    expect(w.text()).not.toMatch(/Away|Here now/)
  })

  it('does not call a closed scene live, even while its socket is still open', async () => {
    vi.mocked(api.getSpectated).mockResolvedValue(view())
    const w = mountView()
    await flushPromises()
    FakeSocket.last!.open()
    await flushPromises()
    expect(w.find(q('spectate-connection')).text()).toContain('live')
    FakeSocket.last!.push({ type: 'frame.closed', seq: 6, status: 'closed', windows: [] })
    await flushPromises()
    expect(w.text()).toContain('closed')
    expect(w.find(q('spectate-connection')).exists()).toBe(false)
    expect(w.text()).not.toContain('live')
  })

  it('says the scene has ended when the GM closes it for good (4404), and stops', async () => {
    vi.mocked(api.getSpectated).mockResolvedValue(view())
    const w = mountView()
    await flushPromises()
    const ws = FakeSocket.last!
    ws.open()
    await flushPromises()
    ws.push({ type: 'frame.closed', seq: 6, status: 'closed', windows: [] })
    ws.onclose?.({ code: 4404 })
    await flushPromises()
    expect(w.find(q('frame-ended')).attributes('data-kind')).toBe('ended')
    expect(w.find(q('frame-ended-title')).text()).toBe('This scene has ended')
    expect(w.find(q('spectate-connection')).text()).toBe('ended')
    expect(w.find(q('spectate-stopped')).exists()).toBe(false)
  })

  it('says so when the link no longer works, and when the GM stops it while watching', async () => {
    vi.mocked(api.getSpectated).mockRejectedValue(new ApiError(404, 'This spectator link is not valid (any more).'))
    const w = mountView()
    await flushPromises()
    expect(w.find(q('spectate-error')).text()).toContain('This spectator link does not work')

    vi.mocked(api.getSpectated).mockResolvedValue(view())
    const live = mountView()
    await flushPromises()
    FakeSocket.last!.open()
    await flushPromises()
    FakeSocket.last!.onclose?.({ code: 4403 })
    await flushPromises()
    expect(live.find(q('spectate-stopped')).exists()).toBe(true)
  })

  it('lets a signed-out visitor watch live, offering to log in (back here) or sign up', async () => {
    useAuthStore().user = null
    vi.mocked(api.getSpectated).mockResolvedValue(view())
    const w = mountView()
    await flushPromises()
    FakeSocket.last!.open()
    await flushPromises()
    expect(w.find(q('spectate-guest')).exists()).toBe(true)
    const links = w.findAllComponents(RouterLinkStub).map((l) => l.props('to'))
    expect(links).toContainEqual({ name: 'login', query: { redirect: '/watch/watch1' } })
    expect(links).toContainEqual({ name: 'signup' })
    FakeSocket.last!.push({ type: 'outcome.created', seq: 9, outcome: makeOutcome({ id: 'o2', seq: 9 }) })
    await flushPromises()
    expect(w.findAll(q('spectate-feed') + ' > *').length).toBe(2)
    expect(w.find(q('table-talk')).exists()).toBe(false)
    FakeSocket.last!.onclose?.({ code: 4404 })
    await flushPromises()
    expect(w.find(q('frame-ended-back')).text()).toBe('Log in') // not a dashboard they have none of
  })

  it('shows a signed-in spectator no guest bar', async () => {
    vi.mocked(api.getSpectated).mockResolvedValue(view())
    const w = mountView()
    await flushPromises()
    expect(w.find(q('spectate-guest')).exists()).toBe(false)
  })
})
