import { flushPromises } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { effectScope } from 'vue'
import * as api from '@/api/frames'
import { ApiError } from '@/api/http'
import type { FrameView } from '@/api/types'
import { STALL_CHECK_MS, useFrameSocket } from '@/composables/useFrameSocket'
import { FakeSocket } from '@/test/fakeSocket'
import { makeFrameView, makeLiquid, makeNarrative, makeOutcome, makeScene, SEATS } from '@/test/factories'
import { STALLED_AFTER_MS, useFrameStore } from './frame'
import { useToastsStore } from './toasts'

vi.mock('@/api/frames', () => ({
  getFrame: vi.fn(),
  submitLiquid: vi.fn(),
  editLiquid: vi.fn(),
  withdrawLiquid: vi.fn(),
  commitLiquid: vi.fn(),
  updateSeat: vi.fn(),
  updateFrame: vi.fn(),
  rotateInvite: vi.fn(),
  controlFrame: vi.fn(),
  advanceFrame: vi.fn(),
  listPasses: vi.fn(),
  retryPass: vi.fn(),
  getScenes: vi.fn(() => Promise.resolve({ scenes: [] })),
  frameSocketUrl: (id: string) => `ws://test/ws/frames/${id}/`,
}))

/** The frame's socket and store, live, with the server answering `views` in turn. */
async function live(...views: FrameView[]) {
  const answers = [...views]
  vi.mocked(api.getFrame).mockImplementation(() => Promise.resolve(answers.length > 1 ? answers.shift()! : answers[0]!))
  const scope = effectScope()
  const socket = scope.run(() => useFrameSocket('frame1'))!
  const store = useFrameStore()
  await flushPromises()
  FakeSocket.last!.open()
  await flushPromises()
  return { socket, store, ws: FakeSocket.last!, stop: () => scope.stop() }
}

describe('frame store', () => {
  beforeEach(() => {
    vi.stubGlobal('WebSocket', FakeSocket)
    setActivePinia(createPinia())
    vi.clearAllMocks()
  })
  afterEach(() => vi.unstubAllGlobals())

  it('reads the frame, then applies the socket’s events in order', async () => {
    const { store, ws, stop } = await live(makeFrameView({ seq: 2 }))
    expect(api.getFrame).toHaveBeenCalledTimes(2) // at once, and when the socket is ready
    expect(store.mySeat?.name).toBe('Alice')
    ws.push({ type: 'outcome.created', seq: 3, outcome: makeOutcome({ id: 'o1', seq: 3 }) })
    await flushPromises()
    expect(store.feed.map((e) => e.key)).toEqual(['o:o1'])
    expect(api.getFrame).toHaveBeenCalledTimes(2)
    stop()
  })

  it('re-reads on a gap in seq and replays only what is newer than the snapshot', async () => {
    const later = makeFrameView({ seq: 5, outcomes: [makeOutcome({ id: 'o1', seq: 3 }), makeOutcome({ id: 'o2', seq: 5 })] })
    const { store, ws, stop } = await live(makeFrameView({ seq: 2 }), makeFrameView({ seq: 2 }), later)
    ws.push({ type: 'outcome.created', seq: 5, outcome: makeOutcome({ id: 'o2', seq: 5 }) }) // 3 and 4 were lost
    ws.push({ type: 'liquid.created', seq: 6, liquid: makeLiquid({ id: 'l1' }) })
    await flushPromises()
    expect(api.getFrame).toHaveBeenCalledTimes(3)
    expect(store.state?.outcomes.map((o) => o.id)).toEqual(['o1', 'o2'])
    expect(store.myLiquid.map((l) => l.id)).toEqual(['l1'])
    expect(store.state?.seq).toBe(6)
    stop()
  })

  it('resumes a narrative from its stored text and index after a hole, without doubling it', async () => {
    const streaming = makeNarrative({ id: 'n1', text: 'It', token_count: 1 })
    const checkpoint = makeNarrative({ id: 'n1', text: 'It was dark', token_count: 3 })
    const { store, ws, stop } = await live(
      makeFrameView({ seq: 1, narratives: [streaming] }),
      makeFrameView({ seq: 1, narratives: [streaming] }),
      makeFrameView({ seq: 1, narratives: [checkpoint] }),
    )
    const token = (index: number, delta: string) => ({ type: 'narrative.token', solid: 'n1', seat: SEATS.alice, index, delta })
    ws.push(token(1, ' was'))
    ws.push(token(3, ' and')) // index 2 was lost: re-read
    ws.push(token(2, ' dark')) // held by the checkpoint already
    ws.push(token(4, ' cold'))
    await flushPromises()
    expect(api.getFrame).toHaveBeenCalledTimes(3)
    expect(store.state?.narratives.n1).toMatchObject({ text: 'It was dark and cold', token_count: 5 })
    stop()
  })

  it('stops waiting for a stream that snapshots keep lacking (a run that is gone)', async () => {
    const { store, stop } = await live(makeFrameView({ seq: 1 }))
    expect(store.narrativePosition('gone')).toBe(0)
    await store.load('frame1')
    await store.load('frame1')
    expect(store.narrativePosition('gone')).toBe(Infinity)
    stop()
  })

  it('shows who is typing, and never for longer than their presence says', async () => {
    const { store, ws, stop } = await live(makeFrameView({ seq: 1 }))
    ws.push({ type: 'presence', seat: SEATS.bob, typing: true })
    await flushPromises()
    expect(Object.keys(store.typing)).toEqual([SEATS.bob])
    ws.push({ type: 'presence', seat: SEATS.bob, typing: false })
    await flushPromises()
    expect(store.typing).toEqual({})
    stop()
  })

  it('re-reads a narrative whose stream went silent past the server’s timeout: its end was lost', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] })
    const mine = { seat: SEATS.alice, text: 'The door', token_count: 1 }
    const streaming = makeFrameView({ seq: 1, narratives: [makeNarrative({ id: 'n1', status: 'streaming', ...mine })] })
    const done = makeFrameView({ seq: 1, narratives: [makeNarrative({ id: 'n1', ...mine, status: 'done', text: 'The door opens.' })] })
    const { store, stop } = await live(streaming, streaming, done)
    expect(api.getFrame).toHaveBeenCalledTimes(2)
    vi.advanceTimersByTime(STALL_CHECK_MS) // first seen silent here
    vi.advanceTimersByTime(STALLED_AFTER_MS - STALL_CHECK_MS)
    await flushPromises()
    expect(api.getFrame).toHaveBeenCalledTimes(2) // not yet: the server may still send it
    vi.advanceTimersByTime(STALL_CHECK_MS)
    await flushPromises()
    expect(api.getFrame).toHaveBeenCalledTimes(3)
    expect(store.state?.narratives.n1?.status).toBe('done')
    vi.advanceTimersByTime(STALLED_AFTER_MS * 2)
    await flushPromises()
    expect(api.getFrame).toHaveBeenCalledTimes(3) // done: never again
    vi.useRealTimers()
    stop()
  })

  it('says a seat waits for the model, how many go first, until its call is sent', async () => {
    const { store, ws, stop } = await live(makeFrameView({ seq: 1 }))
    ws.push({ type: 'model.waiting', seat: SEATS.bob, step: 'outcome', ahead: 2 })
    await flushPromises()
    expect(store.waiting).toEqual({ [SEATS.bob]: { step: 'outcome', ahead: 2 } })
    ws.push({ type: 'model.waiting', seat: SEATS.bob, step: 'outcome', ahead: 1 })
    await flushPromises()
    expect(store.waiting[SEATS.bob]?.ahead).toBe(1)
    ws.push({ type: 'model.waiting', seat: SEATS.bob, step: 'outcome', ahead: 0 })
    await flushPromises()
    expect(store.waiting).toEqual({})
    stop()
  })

  it('knows who is here from the sockets’ greetings, apart from who is typing', async () => {
    const { store, ws, stop } = await live(makeFrameView({ seq: 1 }))
    ws.push({ type: 'presence', seat: SEATS.bob, typing: true })
    ws.push({ type: 'presence', seat: SEATS.bob, online: true, hello: true })
    await flushPromises()
    expect([...store.online]).toEqual([SEATS.bob])
    expect(Object.keys(store.typing)).toEqual([SEATS.bob]) // a greeting does not stop typing
    ws.push({ type: 'presence', seat: SEATS.bob, online: false })
    await flushPromises()
    expect(store.online.size).toBe(0)
    stop()
  })

  it('submits for the player’s seat and keeps the newer copy when the answer arrives late', async () => {
    const { store, ws, stop } = await live(makeFrameView({ seq: 1 }))
    const draft = makeLiquid({ id: 'l1' })
    let answer: (l: typeof draft) => void = () => undefined
    vi.mocked(api.submitLiquid).mockReturnValue(new Promise((resolve) => (answer = resolve)))
    const sent = store.submit('I open the door.')
    ws.push({ type: 'liquid.created', seq: 2, liquid: draft })
    ws.push({ type: 'liquid.analyzed', seq: 3, liquid: { ...draft, pscale: -1, analysis_source: 'model', capable: true } })
    answer(draft)
    expect(await sent).toBe(true)
    expect(api.submitLiquid).toHaveBeenCalledWith('frame1', SEATS.alice, 'I open the door.')
    expect(store.myLiquid[0]).toMatchObject({ analysis_source: 'model', pscale: -1 })

    vi.mocked(api.withdrawLiquid).mockResolvedValue(undefined)
    await store.withdraw(store.myLiquid[0]!)
    expect(store.myLiquid).toEqual([])
    stop()
  })

  it('turns a refused action into a toast', async () => {
    const { store, stop } = await live(makeFrameView({ seq: 1, liquid: [makeLiquid({ id: 'l1' })] }))
    vi.mocked(api.commitLiquid).mockRejectedValue(new ApiError(409, 'This intention is committed; it can no longer change.'))
    expect(await store.commit(store.myLiquid[0]!)).toBe(false)
    expect(useToastsStore().toasts.map((t) => t.message)).toEqual(['This intention is committed; it can no longer change.'])
    stop()
  })

  it('stops for good when the player is kicked (4403)', async () => {
    const { socket, ws, stop } = await live(makeFrameView({ seq: 1 }))
    ws.onclose?.({ code: 4403 })
    await flushPromises()
    expect(socket.accessEnded.value).toBe(true)
    ws.push({ type: 'outcome.created', seq: 2, outcome: makeOutcome({ id: 'o1', seq: 2 }) })
    await flushPromises()
    expect(api.getFrame).toHaveBeenCalledTimes(2)
    stop()
  })

  it('drops a restarted narrative, and the dead run’s late deltas with it, without a re-read', async () => {
    const { store, ws, stop } = await live(makeFrameView({ seq: 1, narratives: [makeNarrative({ id: 'n1', text: 'The door', token_count: 1 })] }))
    const token = (solid: string, index: number, delta: string) => ({ type: 'narrative.token', solid, seat: SEATS.alice, index, delta })
    ws.push(token('n1', 1, ' creaks'))
    ws.push({ type: 'narrative.restarted', solid: 'n1', seat: SEATS.alice, shared: false })
    ws.push(token('n2', 0, 'It opens'))
    ws.push(token('n1', 2, ' and')) // the old worker was not quite dead
    ws.push(token('n2', 1, '.'))
    await flushPromises()
    expect(store.feed.map((e) => e.key)).toEqual(['n:n2'])
    expect(store.state?.narratives.n2?.text).toBe('It opens.')
    expect(store.narrativePosition('n1')).toBe(Infinity)
    expect(api.getFrame).toHaveBeenCalledTimes(2) // nothing was missed
    stop()
  })

  it('stops for good when the frame ends (4404), reads it once more, and tells closed from deleted', async () => {
    vi.useFakeTimers()
    try {
      const closed = makeFrameView({ seq: 2, status: 'closed' })
      const { socket, ws, stop } = await live(makeFrameView({ seq: 1 }), makeFrameView({ seq: 1 }), closed)
      ws.push({ type: 'frame.closed', seq: 2, status: 'closed', windows: [] })
      ws.onclose?.({ code: 4404 })
      await flushPromises()
      expect(socket.gone.value).toBe(true)
      expect(socket.end.value).toMatchObject({ kind: 'ended', title: 'This scene has ended' })
      expect(api.getFrame).toHaveBeenCalledTimes(3) // the last read
      await vi.advanceTimersByTimeAsync(60_000)
      expect(FakeSocket.last).toBe(ws) // never reconnects
      stop()

      setActivePinia(createPinia())
      vi.mocked(api.getFrame).mockReset()
      const deleted = await live(makeFrameView({ seq: 1 }))
      vi.mocked(api.getFrame).mockRejectedValue(new ApiError(404, 'Not found.'))
      deleted.ws.onclose?.({ code: 4404 })
      await flushPromises()
      expect(deleted.socket.end.value).toMatchObject({ kind: 'deleted', title: 'This scene was deleted' })
      expect(deleted.store.state?.info.name).toBe('Night at the docks') // what was there stays
      await vi.advanceTimersByTimeAsync(60_000)
      expect(FakeSocket.last).toBe(deleted.ws)
      deleted.stop()
    } finally {
      vi.useRealTimers()
    }
  })

  it('sends typing presence for the player’s seat at most every few seconds, and its end', async () => {
    const { socket, ws, stop } = await live(makeFrameView({ seq: 1 }))
    socket.typed(SEATS.alice, 1000)
    socket.typed(SEATS.alice, 2000)
    socket.typed(SEATS.alice, 4000)
    socket.stoppedTyping(SEATS.alice)
    socket.stoppedTyping(SEATS.alice)
    expect(ws.sent).toEqual([
      { type: 'vapor', seat: SEATS.alice },
      { type: 'vapor', seat: SEATS.alice },
      { type: 'vapor', seat: SEATS.alice, typing: false },
    ])
    stop()
  })

  it('applies the GM’s new settings to every page, re-reading when what a player may read changed', async () => {
    const { store, ws, stop } = await live(makeFrameView({ seq: 2 }))
    const reads = vi.mocked(api.getFrame).mock.calls.length
    ws.push({ type: 'frame.updated', seq: 3, frame: { name: 'Night two', tempo: 0.5, liquid_visibility: 'all' } })
    await flushPromises()
    expect(store.info).toMatchObject({ name: 'Night two', tempo: 0.5, liquid_visibility: 'all' })
    expect(store.state?.seq).toBe(3)
    expect(api.getFrame).toHaveBeenCalledTimes(reads) // nothing else to read for a player
    vi.mocked(api.getFrame).mockResolvedValue(makeFrameView({ seq: 4, name: 'Night two', tempo: 0.5, liquid_visibility: 'own' }))
    ws.push({ type: 'frame.updated', seq: 4, frame: { name: 'Night two', tempo: 0.5, liquid_visibility: 'own' } })
    await flushPromises()
    expect(api.getFrame).toHaveBeenCalledTimes(reads + 1) // others' intentions may be hidden now
    expect(store.info?.liquid_visibility).toBe('own')
    stop()
  })

  it('shows the settings the server stored at once after the GM saves them', async () => {
    const { store, stop } = await live(makeFrameView({ seq: 2, is_gm: true, my_seats: [] }))
    const played = { id: 'm1', name: 'Big', source: 'frame' as const }
    vi.mocked(api.updateFrame).mockResolvedValue(
      makeFrameView({ seq: 3, is_gm: true, name: 'Renamed', tempo: 3, models: { soft_model: 'm1', medium_model: null, soft: played, medium: {} } }),
    )
    expect(await store.updateSettings({ name: 'Renamed', tempo: 3, soft_model: 'm1' })).toBe(true)
    expect(api.updateFrame).toHaveBeenCalledWith('frame1', { name: 'Renamed', tempo: 3, soft_model: 'm1' })
    expect(store.info).toMatchObject({ name: 'Renamed', tempo: 3, models: { soft: played } })
    expect(store.state?.seq).toBe(2) // the socket's event brings the sequence on
    stop()
  })

  it('re-reads the scenes with the frame after a rewind: a hidden scene’s divider goes, a restored one comes back', async () => {
    const one = makeOutcome({ id: 'o1', seq: 1 })
    const two = makeOutcome({ id: 'o2', seq: 3 })
    const scene1 = makeScene({ number: 1, status: 'closed', closed_seq: 2 })
    const scene2 = makeScene({ number: 2, opened_seq: 2 })
    vi.mocked(api.getScenes).mockResolvedValue({ scenes: [scene1, scene2] })
    const before = makeFrameView({ seq: 3, outcomes: [one, two] })
    const { store, ws, stop } = await live(
      before,
      before, // read again as the socket opens
      makeFrameView({ seq: 4, outcomes: [one] }),
      makeFrameView({ seq: 5, outcomes: [one, two] }),
    )
    const dividers = () => store.feedWithScenes.filter((r) => r.kind === 'scene').length
    expect(dividers()).toBe(1)

    vi.mocked(api.getScenes).mockResolvedValue({ scenes: [{ ...scene1, status: 'open', closed_seq: null }] })
    ws.push({ type: 'frame.rewound', seq: 4, rewind: { id: 1, kind: 'rewind', to_seq: 1, restored: false } })
    await flushPromises()
    expect(store.state?.outcomes.map((o) => o.id)).toEqual(['o1'])
    expect(dividers()).toBe(0)

    vi.mocked(api.getScenes).mockResolvedValue({ scenes: [scene1, scene2] })
    ws.push({ type: 'frame.restored', seq: 5, rewind: { id: 1, kind: 'rewind', to_seq: 1, restored: true } })
    await flushPromises()
    expect(dividers()).toBe(1)
    stop()
  })
})
