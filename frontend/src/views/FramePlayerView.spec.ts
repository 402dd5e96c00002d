import { flushPromises, mount, RouterLinkStub } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import * as api from '@/api/frames'
import { ApiError } from '@/api/http'
import type { FrameView } from '@/api/types'
import { FakeSocket } from '@/test/fakeSocket'
import { makeFrameView, makeLiquid, makeNarrative, makeOutcome, makeScene, makeSeat, makeWindow, SEATS } from '@/test/factories'
import FramePlayerView from './FramePlayerView.vue'

const replace = vi.fn()
const push = vi.fn()
vi.mock('vue-router', async (original) => ({ ...(await original<typeof import('vue-router')>()), useRouter: () => ({ replace, push }) }))
vi.mock('@/api/frames', () => ({
  getFrame: vi.fn(),
  submitLiquid: vi.fn(),
  editLiquid: vi.fn(),
  withdrawLiquid: vi.fn(),
  commitLiquid: vi.fn(),
  leaveFrame: vi.fn(),
  getSeatSheet: vi.fn(() => new Promise(() => {})),
  getEpilogue: vi.fn(),
  getScenes: vi.fn(() => Promise.resolve({ scenes: [] })),
  closeScene: vi.fn(),
  retryScene: vi.fn(),
  retryPass: vi.fn(),
  frameSocketUrl: (id: string) => `ws://test/ws/frames/${id}/`,
  exportUrl: (id: string, format: string) => `/api/frames/${id}/export?format=${format}`,
}))

const q = (id: string) => `[data-testid="${id}"]`

async function mountView(view: FrameView) {
  vi.mocked(api.getFrame).mockResolvedValue(view)
  const w = mount(FramePlayerView, { props: { id: 'frame1' }, global: { plugins: [createPinia()], stubs: { RouterLink: RouterLinkStub } } })
  await flushPromises()
  FakeSocket.last!.open()
  await flushPromises()
  return w
}

describe('FramePlayerView', () => {
  beforeEach(() => {
    vi.stubGlobal('WebSocket', FakeSocket)
    setActivePinia(createPinia())
    vi.clearAllMocks()
  })
  afterEach(() => vi.unstubAllGlobals())

  it('shows the table, the feed, and the player’s own story streaming in', async () => {
    const w = await mountView(makeFrameView({ seq: 3, outcomes: [makeOutcome({ id: 'o1', seq: 3 })] }))
    expect(FakeSocket.last!.url).toBe('ws://test/ws/frames/frame1/')
    expect(w.find(q('frame-name')).text()).toBe('Night at the docks')
    expect(w.find(q('my-character')).text()).toContain('Alice')
    expect(w.findAll(q('seat-item')).map((s) => s.attributes('data-controller'))).toEqual(['human', 'human', 'ai'])
    expect(w.find(q('feed-outcome')).exists()).toBe(true)

    FakeSocket.last!.push({ type: 'narrative.token', solid: 'n1', seat: SEATS.alice, index: 0, delta: 'The door ' })
    FakeSocket.last!.push({ type: 'narrative.token', solid: 'n1', seat: SEATS.alice, index: 1, delta: 'creaks.' })
    FakeSocket.last!.push({ type: 'presence', seat: SEATS.bob, typing: true })
    await flushPromises()
    expect(w.find(q('feed-narrative')).attributes('data-status')).toBe('streaming')
    expect(w.find(q('narrative-text')).text()).toBe('The door creaks.')
    expect(w.find(`[data-seat-id="${SEATS.bob}"]`).attributes('data-typing')).toBe('true')

    FakeSocket.last!.push({ type: 'narrative.done', solid: 'n1', seat: SEATS.alice, narrative: makeNarrative({ id: 'n1', seat: SEATS.alice, text: 'The door creaks open.', token_count: 3, status: 'done' }) })
    await flushPromises()
    expect(w.find(q('narrative-text')).text()).toBe('The door creaks open.')
    // The story so far follows the feed, with the player's export to download.
    expect(w.find(q('recap-count')).text()).toBe('1 passage')
    expect(w.find(q('recap-read')).text()).toContain('The door creaks open.')
    expect(w.find(q('export-md')).attributes('href')).toBe('/api/frames/frame1/export?format=md')
  })

  it('shows a divider where a scene opens and the player’s own summary of the one it ended', async () => {
    const w = await mountView(makeFrameView({ seq: 3, outcomes: [makeOutcome({ id: 'o1', seq: 3 })] }))
    expect(w.find(q('scene-divider')).exists()).toBe(false)
    const ended = makeScene({ number: 1, status: 'closed', closed_seq: 3, closed_reason: 'gm', summary_status: 'done', summaries: [{ seat: SEATS.alice, name: 'Alice', text: 'I opened the door.' }] })
    vi.mocked(api.getScenes).mockResolvedValue({ scenes: [ended, makeScene({ number: 2, title: 'The docks', opened_seq: 3 })] })
    FakeSocket.last!.push({ type: 'scene.closed', seq: 4, scene: ended })
    await flushPromises()
    expect(api.getScenes).toHaveBeenCalledWith('frame1')
    expect(w.find(q('scene-title')).text()).toBe('Scene 2 — The docks')
    expect(w.find(q('scene-own-summary')).text()).toContain('I opened the door.')
  })

  it('says whom the round waits for once a window opens, and names the frame in the tab', async () => {
    const w = await mountView(makeFrameView({ seq: 1 }))
    expect(document.title).toBe('Night at the docks · LMiX')
    expect(w.find(q('waiting-for')).exists()).toBe(false)
    FakeSocket.last!.push({ type: 'window.opened', seq: 2, window: makeWindow({ id: 'wb', seat: SEATS.bob }) })
    await flushPromises()
    expect(w.find(q('waiting-for')).text()).toBe('Waiting for you to commit')
    expect(w.find(q('alerts-toggle')).attributes('aria-pressed')).toBe('false')
  })

  it('shows the player’s character sheet for their own seat', async () => {
    await mountView(makeFrameView({ seq: 1 }))
    expect(api.getSeatSheet).toHaveBeenCalledWith('frame1', SEATS.alice)
  })

  it('words a shared frame as one story everyone reads, never "your own story"', async () => {
    const w = await mountView(makeFrameView({ seq: 0, mode: 'shared' }))
    expect(w.find(q('frame-mode')).text()).toBe('shared story')
    expect(w.find(q('feed-empty')).text()).toContain('same story')
    expect(w.text()).not.toMatch(/own stor/)
  })

  it('keeps what the player wrote when the server refuses it, and toasts why', async () => {
    vi.mocked(api.submitLiquid).mockRejectedValue(new ApiError(400, 'Ensure this field has no more than 4000 characters.'))
    const w = await mountView(makeFrameView({ seq: 0 }))
    await w.find(q('composer-input')).setValue('I climb the mast.')
    await w.find(q('composer-form')).trigger('submit')
    await flushPromises()
    expect(api.submitLiquid).toHaveBeenCalled()
    expect((w.find(q('composer-input')).element as HTMLTextAreaElement).value).toBe('I climb the mast.')

    vi.mocked(api.submitLiquid).mockRejectedValue(new ApiError(0, 'Failed to fetch'))
    await w.find(q('composer-form')).trigger('submit')
    await flushPromises()
    expect((w.find(q('composer-input')).element as HTMLTextAreaElement).value).toBe('I climb the mast.')
  })

  it('shows others’ intentions without their text when the frame hides it', async () => {
    const { content: _c, refined: _r, ...hidden } = makeLiquid({ id: 'lb', seat: SEATS.bob, content: 'BOB-SECRET' })
    const w = await mountView(makeFrameView({ seq: 1, liquid_visibility: 'own', liquid: [hidden] }))
    const others = w.find(q('others-liquid'))
    expect(others.find(q('liquid-hidden')).text()).toContain('Wrote an intention you cannot read.')
    expect(w.html()).not.toContain('BOB-SECRET')
  })

  it('shows an AI seat’s held intention as its character about to act, then its words once the GM releases it', async () => {
    const { content: _c, refined: _r, ...held } = makeLiquid({ id: 'lt', seat: SEATS.tony, author: null, held: true, content: 'BOB-SECRET' })
    const w = await mountView(makeFrameView({ seq: 1, liquid_visibility: 'all', liquid: [held] }))
    const others = () => w.find(q('others-liquid'))
    expect(others().find(q('liquid-held')).text()).toBe('Tony is about to act — the GM is reviewing it.')
    expect(others().find(q('liquid-hidden')).exists()).toBe(false)
    const released = { ...held, held: false, author: 1, status: 'committed' as const, committed_at: '2025-01-01T00:00:09Z', content: 'Tony opens the door.' }
    FakeSocket.last!.push({ type: 'liquid.committed', seq: 2, liquid: released })
    await flushPromises()
    expect(others().find(q('liquid-held')).exists()).toBe(false)
    expect(others().find(q('liquid-text')).text()).toBe('Tony opens the door.')
  })

  it('says so when the player is kicked, and takes the composer away', async () => {
    const w = await mountView(makeFrameView({ seq: 1 }))
    expect(w.find(q('composer-form')).exists()).toBe(true)
    FakeSocket.last!.push({ type: 'seat.changed', seq: 2, seat: makeSeat({ id: SEATS.alice, name: 'Alice', controller: 'open', user: null }) })
    FakeSocket.last!.onclose?.({ code: 4403 })
    await flushPromises()
    expect(w.find(q('notice-removed')).text()).toContain('no longer in this frame')
    expect(w.find(q('composer-form')).exists()).toBe(false)
    expect(w.find(q('connection-status')).attributes('data-status')).toBe('failed')
  })

  it('replaces a restarted narrative’s half text with the new run’s', async () => {
    const w = await mountView(makeFrameView({ seq: 1 }))
    FakeSocket.last!.push({ type: 'narrative.token', solid: 'n1', seat: SEATS.alice, index: 0, delta: 'The door cr' })
    FakeSocket.last!.push({ type: 'narrative.restarted', solid: 'n1', seat: SEATS.alice, shared: false })
    FakeSocket.last!.push({ type: 'narrative.token', solid: 'n2', seat: SEATS.alice, index: 0, delta: 'It opens.' })
    await flushPromises()
    expect(w.findAll(q('narrative-text')).map((n) => n.text())).toEqual(['It opens.'])
  })

  it('says the scene has ended when the GM closes it for good (4404), with the way back, and stops', async () => {
    const w = await mountView(makeFrameView({ seq: 1 }))
    vi.mocked(api.getFrame).mockResolvedValue(makeFrameView({ seq: 2, status: 'closed' }))
    FakeSocket.last!.push({ type: 'frame.closed', seq: 2, status: 'closed', windows: [] })
    FakeSocket.last!.onclose?.({ code: 4404 })
    await flushPromises()
    expect(w.find(q('frame-ended')).attributes('data-kind')).toBe('ended')
    expect(w.find(q('frame-ended-title')).text()).toBe('This scene has ended')
    const back = w.findAllComponents(RouterLinkStub).find((link) => link.text() === 'Back to frames')
    expect(back?.props('to')).toBe('/frames')
    expect(w.find(q('notice-closed')).exists()).toBe(false) // said once, by the panel
    expect(w.find(q('composer-form')).exists()).toBe(false)
    expect(w.find(q('leave-seat')).exists()).toBe(false)
  })

  it('shows my character’s epilogue under the ended panel once it is written', async () => {
    const mine = { id: 'p1', seat: SEATS.alice, character: 'Alice', status: 'done' as const, text: 'Alice looks back.', narrative: 'n9', error: '' }
    vi.mocked(api.getEpilogue).mockResolvedValue({ status: 'done', epilogues: [mine] })
    const w = await mountView(makeFrameView({ seq: 1 }))
    expect(api.getEpilogue).not.toHaveBeenCalled() // only once the scene ended
    vi.mocked(api.getFrame).mockResolvedValue(makeFrameView({ seq: 2, status: 'closed' }))
    FakeSocket.last!.push({ type: 'frame.closed', seq: 2, status: 'closed', windows: [] })
    FakeSocket.last!.onclose?.({ code: 4404 })
    await flushPromises()
    expect(api.getEpilogue).toHaveBeenCalledWith('frame1')
    expect(w.find(q('epilogue-text')).text()).toBe('Alice looks back.')
    expect(w.find(q('epilogue-retry')).exists()).toBe(false)
  })

  it('says the scene was deleted when its socket closes with 4404 and the frame is gone', async () => {
    const w = await mountView(makeFrameView({ seq: 1 }))
    vi.mocked(api.getFrame).mockRejectedValue(new ApiError(404, 'Not found.'))
    FakeSocket.last!.onclose?.({ code: 4404 })
    await flushPromises()
    expect(w.find(q('frame-ended')).attributes('data-kind')).toBe('deleted')
    expect(w.find(q('frame-ended-title')).text()).toBe('This scene was deleted')
    expect(w.find(q('frame-name')).text()).toBe('Night at the docks') // where it stood stays readable
    expect(w.find(q('composer-form')).exists()).toBe(false)
  })

  it('sends the GM, who has no seat, to the GM page', async () => {
    await mountView(makeFrameView({ seq: 1, is_gm: true, my_seats: [], invite_code: 'abc' }))
    expect(replace).toHaveBeenCalledWith('/frames/frame1/gm')
  })

  it('says when the frame is paused', async () => {
    const w = await mountView(makeFrameView({ seq: 1 }))
    FakeSocket.last!.push({ type: 'frame.paused', seq: 2, status: 'paused', windows: [] })
    await flushPromises()
    expect(w.find(q('notice-paused')).text()).toContain('countdown is frozen')
    expect(w.find(q('frame-status')).text()).toContain('paused')
  })

  it('leaves the seat after confirming, and goes back to the frames', async () => {
    const w = await mountView(makeFrameView())
    vi.mocked(api.leaveFrame).mockResolvedValue(undefined)
    await w.find(q('leave-seat')).trigger('click')
    await flushPromises()
    expect(api.leaveFrame).not.toHaveBeenCalled()
    document.querySelector<HTMLButtonElement>(q('confirm-ok'))!.click()
    await flushPromises()
    expect(api.leaveFrame).toHaveBeenCalledWith('frame1', SEATS.alice)
    expect(push).toHaveBeenCalledWith('/frames')
    w.unmount()
  })
})
