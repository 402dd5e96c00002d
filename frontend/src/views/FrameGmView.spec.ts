import { flushPromises, mount, RouterLinkStub } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import * as api from '@/api/frames'
import * as callsApi from '@/api/frameCalls'
import type { CharacterSheet, FrameView, PassInfo } from '@/api/types'
import { ApiError } from '@/api/http'
import { useToastsStore } from '@/stores/toasts'
import { FakeSocket } from '@/test/fakeSocket'
import { makeFrameView, makeLiquid, makeNarrative, makeOutcome, makeScene, makeSeat, makeWindow, SEATS } from '@/test/factories'
import FrameGmView from './FrameGmView.vue'

vi.mock('@/api/assistants', () => ({ assistantsApi: { list: vi.fn(() => Promise.resolve([])) } }))
vi.mock('@/api/models', () => ({
  modelsApi: { list: vi.fn(() => Promise.resolve([{ id: 'm-cast', name: 'Smol' }, { id: 'm-big', name: 'Big' }])) },
  createModels: vi.fn(),
  makeDefault: vi.fn(),
}))
vi.mock('@/api/frames', () => ({
  getFrame: vi.fn(),
  listPasses: vi.fn(),
  retryPass: vi.fn(),
  updateSeat: vi.fn(),
  controlFrame: vi.fn(),
  getEpilogue: vi.fn(),
  getScenes: vi.fn(() => Promise.resolve({ scenes: [] })),
  closeScene: vi.fn(),
  retryScene: vi.fn(),
  rotateInvite: vi.fn(),
  advanceFrame: vi.fn(),
  fireWindow: vi.fn(),
  cancelWindow: vi.fn(),
  commitLiquid: vi.fn(),
  editLiquid: vi.fn(),
  regenerateLiquid: vi.fn(),
  setSpectators: vi.fn(),
  updateFrame: vi.fn(),
  getSeatSheet: vi.fn(),
  getSeatState: vi.fn(() => new Promise(() => {})),
  snapshotUrl: (frame: string, seat: string) => `/api/frames/${frame}/seats/${seat}/snapshot`,
  importSnapshot: vi.fn(),
  resetSeat: vi.fn(),
  frameSocketUrl: (id: string) => `ws://test/ws/frames/${id}/`,
  exportUrl: (id: string, format: string) => `/api/frames/${id}/export?format=${format}`,
  inviteLink: (code: string) => `http://test/join/${code}`,
  spectateLink: (code: string) => `http://test/watch/${code}`,
}))

vi.mock('@/api/frameCalls', () => ({ getFrameCalls: vi.fn() }))
const q = (id: string) => `[data-testid="${id}"]`

const failedPass: PassInfo = {
  id: 'p1',
  seat: SEATS.bob,
  kind: 'medium',
  trigger: 'expiry',
  status: 'failed',
  liquid: null,
  window: 'w1',
  interrupt: null,
  messages: [{ step: 'bones', attempt: 1, messages: [{ role: 'system', content: 'You narrate.' }] }],
  tries: [],
  error: 'Connection refused.',
  attempts: 1,
  created_at: '2025-01-01T00:00:20Z',
  calls: [{ purpose: 'synthesis.bones', kind: 'structured', model_id: 'gpt-x', prompt_tokens: 900, completion_tokens: null, latency_ms: 12, error: 'Connection refused.', finished_at: null }],
}

function gmView(over: Partial<FrameView> = {}): FrameView {
  return makeFrameView({
    seq: 4,
    is_gm: true,
    my_seats: [],
    invite_code: 'code123',
    outcomes: [makeOutcome({ id: 'o1', seq: 3, flags: [{ kind: 'secret', owner: 'Bob', excerpt: 'Names the smuggler.' }] })],
    narratives: [makeNarrative({ id: 'n1', seat: SEATS.alice, text: 'ALICE-ONLY prose.', status: 'done' })],
    windows: [makeWindow({ id: 'w1', seat: SEATS.bob, status: 'failed' })],
    ...over,
  })
}

async function mountView(view: FrameView, passes: PassInfo[] = [failedPass]) {
  vi.mocked(api.getFrame).mockResolvedValue(view)
  vi.mocked(api.listPasses).mockResolvedValue(passes)
  const w = mount(FrameGmView, { props: { id: 'frame1' }, global: { plugins: [createPinia()], stubs: { RouterLink: RouterLinkStub } } })
  await flushPromises()
  FakeSocket.last!.open()
  await flushPromises()
  return w
}

describe('FrameGmView', () => {
  beforeEach(() => {
    vi.stubGlobal('WebSocket', FakeSocket)
    setActivePinia(createPinia())
    vi.clearAllMocks()
  })
  afterEach(() => vi.unstubAllGlobals())

  it('shows every narrative marked private to its player, the guard’s flags, and the invite link', async () => {
    const w = await mountView(gmView())
    expect(w.find(q('narrative-label')).text()).toContain('Private to Alice')
    expect(w.find(q('narrative-text')).text()).toBe('ALICE-ONLY prose.')
    expect(w.find(q('outcome-flag')).exists()).toBe(true)
    expect((w.find(q('invite-input')).element as HTMLInputElement).value).toBe('http://test/join/code123')
    // The whole scene's story so far, each passage by its character, to download.
    expect(w.find(q('recap-read')).text()).toContain('Alice')
    expect(w.find(q('export-json')).attributes('href')).toBe('/api/frames/frame1/export?format=json')
  })

  it('closes the scene with the next title, and shows every character’s summary under the divider', async () => {
    const w = await mountView(gmView())
    const ended = makeScene({
      number: 1,
      status: 'closed',
      closed_seq: 3,
      closed_reason: 'gm',
      summary_status: 'done',
      summaries: [
        { seat: SEATS.alice, name: 'Alice', text: 'ALICE-SUMMARY' },
        { seat: SEATS.bob, name: 'Bob', text: 'BOB-SUMMARY' },
      ],
    })
    const opened = makeScene({ number: 2, title: 'The docks', opened_seq: 3 })
    vi.mocked(api.closeScene).mockResolvedValue({ closed: ended, opened })
    vi.mocked(api.getScenes).mockResolvedValue({ scenes: [ended, opened] })
    await w.find(q('scene-close-title')).setValue('The docks')
    await w.find(q('scene-close')).trigger('submit')
    await flushPromises()
    expect(api.closeScene).toHaveBeenCalledWith('frame1', 'The docks')
    expect(w.find(q('scene-title')).text()).toBe('Scene 2 — The docks')
    expect(w.findAll(q('scene-own-summary')).map((s) => s.text())).toEqual(['AliceALICE-SUMMARY', 'BobBOB-SUMMARY'])
    expect((w.find(q('scene-close-title')).element as HTMLInputElement).value).toBe('')
  })

  it('lists passes with their LLM calls and retries a failed one', async () => {
    const w = await mountView(gmView())
    expect(w.find(q('failed-count')).text()).toBe('1 failed')
    expect(w.find(q('pass-call')).text()).toContain('gpt-x')
    expect(w.find(q('pass-call')).text()).toContain('Connection refused.')
    vi.mocked(api.retryPass).mockResolvedValue({ id: 'p1', status: 'pending' })
    vi.mocked(api.listPasses).mockResolvedValue([{ ...failedPass, status: 'pending', error: '' }])
    await w.find(q('pass-retry')).trigger('click')
    await flushPromises()
    expect(api.retryPass).toHaveBeenCalledWith('p1')
    expect(w.find(q('pass-item')).attributes('data-status')).toBe('pending')
  })

  it('opens Diagnostics, and a call’s row leads to its pass in the passes list', async () => {
    vi.mocked(callsApi.getFrameCalls).mockResolvedValue({
      calls: [
        {
          id: 7,
          purpose: 'synthesis.bones',
          label: 'Resolving what happened (bones)',
          kind: 'structured',
          pass_id: 'p1',
          pass_kind: 'medium',
          outcome_id: null,
          seat: SEATS.bob,
          character: 'Bob',
          model_name: 'GPT X',
          model_id: 'gpt-x',
          provider: 'openai',
          provider_label: 'OpenAI',
          prompt_tokens: 900,
          completion_tokens: 0,
          latency_ms: 12,
          error: 'Connection refused.',
          status: 'failed',
          started_at: '2025-01-01T00:00:20Z',
          finished_at: '2025-01-01T00:00:21Z',
        },
      ],
      next_before: null,
      page_size: 100,
      totals: { calls: 1, prompt_tokens: 900, completion_tokens: 0, errors: 1, latency_ms: 12, unfinished: 0 },
      queues: [],
    })
    const scrolled = vi.fn()
    Element.prototype.scrollIntoView = scrolled
    const w = await mountView(gmView())
    const dialog = () => document.querySelector(q('gm-diagnostics-dialog'))
    await w.find(q('gm-diagnostics')).trigger('click')
    await flushPromises()
    expect(callsApi.getFrameCalls).toHaveBeenCalledWith('frame1')
    expect(dialog()?.querySelector(q('call-row'))?.textContent).toContain('Resolving what happened (bones)')
    dialog()!.querySelector<HTMLButtonElement>(q('call-toggle'))!.click()
    await flushPromises()
    expect(dialog()?.querySelector(q('call-error'))?.textContent).toBe('Connection refused.')
    dialog()!.querySelector<HTMLButtonElement>(q('call-pass'))!.click()
    await flushPromises()
    expect(dialog()).toBeNull()
    expect(w.find('[data-pass-id="p1"]').classes()).toContain('shown')
    expect(scrolled).toHaveBeenCalled()
    w.unmount()
  })

  it('says the frame was deleted when its socket closes with 4404, and takes the controls away', async () => {
    const w = await mountView(gmView())
    expect(w.find(q('gm-pause')).exists()).toBe(true)
    vi.mocked(api.getFrame).mockRejectedValue(new ApiError(404, 'Not found.'))
    FakeSocket.last!.onclose?.({ code: 4404 })
    await flushPromises()
    expect(w.find(q('frame-ended')).attributes('data-kind')).toBe('deleted')
    expect(w.find(q('frame-ended-back')).text()).toBe('All frames')
    expect(w.find(q('gm-pause')).exists()).toBe(false)
    expect(w.find(q('narrative-text')).text()).toBe('ALICE-ONLY prose.') // what it held stays
  })

  it('closes the scene with an epilogue by default, then shows every epilogue and retries a failed one', async () => {
    const w = await mountView(gmView(), [])
    vi.mocked(api.controlFrame).mockResolvedValue(gmView({ status: 'closed' }))
    await w.find(q('gm-close')).trigger('click')
    await flushPromises()
    const box = document.querySelector<HTMLInputElement>(`${q('close-epilogue')} input`)!
    expect(box.checked).toBe(true)
    document.querySelector<HTMLButtonElement>(q('confirm-ok'))!.click()
    await flushPromises()
    expect(api.controlFrame).toHaveBeenCalledWith('frame1', 'close', { epilogue: true })

    vi.mocked(api.getEpilogue).mockResolvedValue({
      status: 'failed',
      epilogues: [
        { id: 'pa', seat: SEATS.alice, character: 'Alice', status: 'done', text: 'Alice rests.', narrative: 'n8', error: '' },
        { id: 'pb', seat: SEATS.bob, character: 'Bob', status: 'failed', text: '', narrative: null, error: 'Provider down.' },
      ],
    })
    vi.mocked(api.getFrame).mockResolvedValue(gmView({ status: 'closed' }))
    FakeSocket.last!.push({ type: 'frame.closed', seq: 5, status: 'closed', windows: [] })
    FakeSocket.last!.onclose?.({ code: 4404 })
    await flushPromises()
    expect(w.findAll(q('epilogue-item')).length).toBe(2)
    expect(w.find(q('epilogue-text')).text()).toBe('Alice rests.')
    vi.mocked(api.retryPass).mockResolvedValue({ id: 'pb', status: 'pending' })
    await w.find(q('epilogue-retry')).trigger('click')
    await flushPromises()
    expect(api.retryPass).toHaveBeenCalledWith('pb')
  })

  it('closes without an epilogue when the GM unticks it', async () => {
    const w = await mountView(gmView(), [])
    vi.mocked(api.controlFrame).mockResolvedValue(gmView({ status: 'closed' }))
    await w.find(q('gm-close')).trigger('click')
    await flushPromises()
    const box = document.querySelector<HTMLInputElement>(`${q('close-epilogue')} input`)!
    box.click()
    await flushPromises()
    document.querySelector<HTMLButtonElement>(q('confirm-ok'))!.click()
    await flushPromises()
    expect(api.controlFrame).toHaveBeenCalledWith('frame1', 'close', { epilogue: false })
  })

  it('kicks a player after confirming', async () => {
    const w = await mountView(gmView())
    vi.mocked(api.updateSeat).mockResolvedValue(makeSeat({ id: SEATS.alice, name: 'Alice', controller: 'open', user: null }))
    await w.find(`[data-seat-id="${SEATS.alice}"] ${q('gm-seat-kick')}`).trigger('click')
    await flushPromises()
    document.querySelector<HTMLButtonElement>(q('confirm-ok'))!.click()
    await flushPromises()
    expect(api.updateSeat).toHaveBeenCalledWith('frame1', SEATS.alice, { controller: 'open' })
    expect(w.find(`[data-seat-id="${SEATS.alice}"]`).attributes('data-controller')).toBe('open')
  })

  it('pauses the frame; the countdowns freeze when the socket says so', async () => {
    const counting = makeWindow({ id: 'w2', seat: SEATS.alice, expires_at: new Date(Date.now() + 30_000).toISOString() })
    const w = await mountView(gmView({ windows: [counting] }), [])
    vi.mocked(api.controlFrame).mockResolvedValue(gmView())
    await w.find(q('gm-pause')).trigger('click')
    expect(api.controlFrame).toHaveBeenCalledWith('frame1', 'pause')
    FakeSocket.last!.push({ type: 'frame.paused', seq: 5, status: 'paused', windows: [{ ...counting, expires_at: null, remaining_seconds: 25 }] })
    await flushPromises()
    expect(w.find(q('gm-resume')).exists()).toBe(true)
    expect(w.find(`${q('gm-window')} ${q('window-countdown')}`).attributes('data-frozen')).toBe('true')
  })

  it('fires an open window now, its buttons held while the request runs', async () => {
    const counting = makeWindow({ id: 'w2', seat: SEATS.alice, expires_at: new Date(Date.now() + 30_000).toISOString() })
    const w = await mountView(gmView({ windows: [counting] }), [])
    expect(w.find(q('gm-seat-player')).exists()).toBe(true)
    let answer!: () => void
    vi.mocked(api.fireWindow).mockReturnValue(new Promise((resolve) => (answer = () => resolve({ window: { ...counting, status: 'firing' } }))))
    await w.find(q('gm-window-fire')).trigger('click')
    expect(api.fireWindow).toHaveBeenCalledWith('w2')
    expect(w.find(q('gm-window-fire')).attributes('disabled')).toBeDefined()
    expect(w.find(q('gm-window-cancel')).attributes('disabled')).toBeDefined()
    answer()
    await flushPromises()
    expect(w.find(q('gm-window-fire')).attributes('disabled')).toBeUndefined()
    FakeSocket.last!.push({ type: 'window.fired', seq: 5, window: { ...counting, status: 'firing' } })
    await flushPromises()
    expect(w.find(q('gm-window-fire')).exists()).toBe(false)
  })

  it('cancels a window; a refusal becomes a toast', async () => {
    const counting = makeWindow({ id: 'w2', seat: SEATS.alice, expires_at: new Date(Date.now() + 30_000).toISOString() })
    const w = await mountView(gmView({ windows: [counting] }), [])
    vi.mocked(api.cancelWindow).mockRejectedValue(new ApiError(409, 'This window is not open.'))
    await w.find(q('gm-window-cancel')).trigger('click')
    await flushPromises()
    expect(api.cancelWindow).toHaveBeenCalledWith('w2')
    expect(api.fireWindow).not.toHaveBeenCalled()
    // The refusal arrives through a rejected promise: wait for its toast, not a fixed tick.
    await vi.waitFor(() => expect(useToastsStore().toasts.map((t) => t.message)).toContain('This window is not open.'))
  })

  it('allows spectators and shows their link, then stops them', async () => {
    const w = await mountView(gmView())
    vi.mocked(api.setSpectators).mockResolvedValue({ spectator_code: 'watch1' })
    await w.find(q('spectators-allow')).trigger('click')
    await flushPromises()
    expect(api.setSpectators).toHaveBeenCalledWith('frame1', true)
    const links = w.findAll(q('invite-input')).map((i) => (i.element as HTMLInputElement).value)
    expect(links).toContain('http://test/watch/watch1')
    vi.mocked(api.setSpectators).mockResolvedValue({ spectator_code: null })
    await w.find(q('spectators-stop')).trigger('click')
    await flushPromises()
    expect(api.setSpectators).toHaveBeenLastCalledWith('frame1', false)
    expect(w.find(q('spectators-allow')).exists()).toBe(true)
  })

  it('shows who is here on each player’s seat, as the players’ table does', async () => {
    const w = await mountView(gmView())
    const dot = (seat: string) => w.find(`[data-testid="gm-seat"][data-seat-id="${seat}"] ${q('seat-online')}`)
    expect(dot(SEATS.alice).attributes('data-online')).toBe('false')
    expect(dot(SEATS.tony).exists()).toBe(false) // an AI is never away
    FakeSocket.last!.push({ type: 'presence', seat: SEATS.alice, online: true })
    await flushPromises()
    expect(dot(SEATS.alice).attributes('data-online')).toBe('true')
    expect(dot(SEATS.bob).attributes('data-online')).toBe('false')
    FakeSocket.last!.push({ type: 'presence', seat: SEATS.alice, online: false })
    await flushPromises()
    expect(dot(SEATS.alice).attributes('data-online')).toBe('false')
  })

  it('names a covert character by its real name too, from the GM’s view', async () => {
    const w = await mountView(gmView({ gm_names: { [SEATS.bob]: 'Detective Johnson' } }))
    const row = (seat: string) => w.find(`[data-testid="gm-seat"][data-seat-id="${seat}"]`)
    expect(row(SEATS.bob).find(q('gm-seat-real-name')).text()).toContain('Detective Johnson')
    expect(row(SEATS.alice).find(q('gm-seat-real-name')).exists()).toBe(false)
  })

  it('opens a seat’s character sheet from its row in a dialog, read once however often it opens', async () => {
    const sheet = {
      seat: SEATS.bob,
      world: { name: 'Harbour', description: '' },
      scenario: { name: 'Night', description: '' },
      me: { name: 'Bob', public_name: 'Bob', avatar_url: '', universal: '', internal: 'BOB-SECRET', external: '', style: '' },
      groups: [],
      others: [],
    } as CharacterSheet
    vi.mocked(api.getSeatSheet).mockResolvedValue(sheet)
    const w = await mountView(gmView())
    const dialog = () => document.querySelector(q('gm-sheet-dialog'))
    for (let i = 0; i < 2; i++) {
      await w.find(`[data-seat-id="${SEATS.bob}"] ${q('gm-seat-sheet')}`).trigger('click')
      await flushPromises()
      expect(dialog()?.querySelector(q('sheet-me-secret'))?.textContent).toBe('BOB-SECRET')
      expect(dialog()?.textContent).toContain('Bob — character sheet')
      // The GM's snapshot actions on the seat: export, import, reset.
      const exportLink = dialog()?.querySelector<HTMLAnchorElement>(q('snapshot-export'))
      expect(exportLink?.getAttribute('href')).toBe(`/api/frames/frame1/seats/${SEATS.bob}/snapshot`)
      expect(dialog()?.querySelector(q('snapshot-import'))).not.toBeNull()
      expect(dialog()?.querySelector(q('snapshot-reset'))).not.toBeNull()
      document.querySelector<HTMLButtonElement>(`${q('gm-sheet-dialog')} ${q('modal-close')}`)!.click()
      await flushPromises()
      expect(dialog()).toBeNull()
    }
    expect(api.getSeatSheet).toHaveBeenCalledTimes(1)
    expect(api.getSeatSheet).toHaveBeenCalledWith('frame1', SEATS.bob)
    w.unmount()
  })

  it('puts an AI seat’s reacting choice back when the server refuses it, and toasts why', async () => {
    vi.mocked(api.updateSeat).mockRejectedValue(new ApiError(400, 'Unknown ai_reacts.'))
    const w = await mountView(gmView())
    const select = w.find<HTMLSelectElement>(`[data-seat-id="${SEATS.tony}"] ${q('gm-seat-reacts')}`)
    await select.setValue('always')
    expect(api.updateSeat).toHaveBeenCalledWith('frame1', SEATS.tony, { ai_reacts: 'always' })
    // The refusal arrives through a rejected promise: wait for it.
    await vi.waitFor(() => expect(select.element.value).toBe('addressed'))
    await vi.waitFor(() => expect(useToastsStore().toasts.map((t) => t.message)).toContain('Unknown ai_reacts.'))
  })

  it('applies the guard’s late flags to an outcome', async () => {
    const w = await mountView(gmView({ outcomes: [makeOutcome({ id: 'o1', seq: 3 })] }), [])
    expect(w.find(q('outcome-flag')).exists()).toBe(false)
    FakeSocket.last!.push({ type: 'outcome.flagged', outcome: 'o1', flags: [{ kind: 'secret', owner: 'Bob', excerpt: 'Names the smuggler.' }] })
    await flushPromises()
    expect(w.find(q('outcome-flag')).exists()).toBe(true)
  })

  it('says how many moments wait for the GM’s review, and none once released', async () => {
    const w = await mountView(gmView({ outcomes: [makeOutcome({ id: 'o1', seq: 3, held: true, flags: [{ kind: 'secret', owner: 'Bob', excerpt: 'Names the smuggler.' }] })] }), [])
    expect(w.find(q('held-count')).text()).toContain('One moment waits for your review')
    expect(w.find(q('outcome-release')).exists()).toBe(true)
    FakeSocket.last!.push({ type: 'outcome.released', seq: 5, outcome: makeOutcome({ id: 'o1', seq: 3, released_at: '2025-01-01T00:01:00Z' }) })
    await flushPromises()
    expect(w.find(q('held-count')).exists()).toBe(false)
    expect(w.find(q('outcome-flag')).exists()).toBe(true) // the guard's flags stay the GM's to read
  })

  it('holds an AI seat’s flagged intention for review: released, it is committed and leaves review at once', async () => {
    const flag = { kind: 'internal_truth', owner: 'Bob', excerpt: 'bob-secret' }
    const held = makeLiquid({ id: 'l1', seat: SEATS.tony, author: null, held: true, content: 'Tony whispers bob-secret.' })
    const w = await mountView(gmView({ liquid: [held], liquid_flags: { l1: [flag] } }), [])
    expect(w.find(q('held-liquid-count')).text()).toContain('Tony’s intention waits for your review')
    expect(w.find(q('held-liquid-badge')).text()).toBe('1 held')
    const card = w.find(q('gm-liquid')).find(q('liquid-card'))
    expect(card.find(q('liquid-review-flags')).text()).toBe('internal truth of Bob “bob-secret”')
    const released = { ...held, held: false, author: 1, status: 'committed' as const, committed_at: '2025-01-01T00:00:09Z' }
    vi.mocked(api.commitLiquid).mockResolvedValueOnce(released)
    await card.find(q('liquid-release')).trigger('click')
    await flushPromises()
    expect(api.commitLiquid).toHaveBeenCalledWith('l1')
    expect(w.find(q('liquid-review')).exists()).toBe(false)
    expect(w.find(q('held-liquid-count')).exists()).toBe(false)
    expect(w.find(q('liquid-card')).attributes('data-status')).toBe('committed')
  })

  it('regenerates a held AI intention: it goes at once, with its flags, and the seat’s new one comes by the socket', async () => {
    const held = makeLiquid({ id: 'l1', seat: SEATS.tony, author: null, held: true, content: 'Tony whispers bob-secret.' })
    const w = await mountView(gmView({ liquid: [held], liquid_flags: { l1: [{ kind: 'secret', owner: 'Bob', excerpt: 'x' }] } }), [])
    vi.mocked(api.regenerateLiquid).mockResolvedValueOnce(undefined)
    await w.find(q('liquid-regenerate')).trigger('click')
    await flushPromises()
    expect(api.regenerateLiquid).toHaveBeenCalledWith('l1')
    expect(w.find(q('liquid-card')).exists()).toBe(false)
    FakeSocket.last!.push({ type: 'liquid.withdrawn', seq: 5, liquid: { ...held, status: 'withdrawn' } })
    FakeSocket.last!.push({ type: 'liquid.created', seq: 6, liquid: makeLiquid({ id: 'l2', seat: SEATS.tony, author: null, content: 'Tony shrugs.' }) })
    await flushPromises()
    expect(w.find(q('liquid-text')).text()).toBe('Tony shrugs.')
    expect(w.find(q('liquid-review')).exists()).toBe(false)
  })

  it('shows which model plays each pass and saves new settings', async () => {
    const cast = { id: 'm-cast', name: 'Smol', source: 'assistant' as const }
    const models = {
      soft_model: null,
      medium_model: null,
      soft: { ...cast, source: 'cast' as const },
      medium: { [SEATS.alice]: cast, [SEATS.bob]: cast, [SEATS.tony]: cast },
    }
    const w = await mountView(gmView({ models }), [])
    expect(w.find(q('model-soft')).text()).toBe('Smol (the cast’s most common)')
    expect(w.findAll(q('model-medium')).map((m) => m.text())).toEqual([
      'Alice: Smol (the character’s own)',
      'Bob: Smol (the character’s own)',
      'Tony: Smol (the character’s own)',
    ])
    const big = { id: 'm-big', name: 'Big', source: 'frame' as const }
    vi.mocked(api.updateFrame).mockResolvedValue(
      gmView({ name: 'Night two', tempo: 0.5, models: { ...models, medium_model: 'm-big', medium: { [SEATS.alice]: big, [SEATS.bob]: big, [SEATS.tony]: big } } }),
    )
    await w.find(q('settings-toggle')).trigger('click')
    await w.find(q('settings-name')).setValue('Night two')
    await w.find(q('settings-tempo')).setValue('0.5')
    await w.find(q('settings-medium_model')).setValue('m-big')
    await w.find(q('settings-face-author')).setValue(true)
    await w.find(q('settings-leak_guard')).setValue('flag')
    await w.find(q('settings-second_opinion')).setValue(true)
    await w.find(q('settings-form')).trigger('submit')
    await flushPromises()
    expect(api.updateFrame).toHaveBeenCalledWith('frame1', {
      name: 'Night two',
      tempo: 0.5,
      liquid_visibility: 'all',
      player_faces: ['author'],
      leak_guard: 'flag',
      second_opinion: true,
      soft_model: null,
      medium_model: 'm-big',
    })
    expect(w.find(q('frame-name')).text()).toBe('Night two')
    expect(w.findAll(q('model-medium'))[0]!.text()).toBe('Alice: Big (chosen for this frame)')
  })

  it('takes another page’s settings from the socket and re-reads for the models', async () => {
    const w = await mountView(gmView(), [])
    const reads = vi.mocked(api.getFrame).mock.calls.length
    FakeSocket.last!.push({ type: 'frame.updated', seq: 5, frame: { name: 'Renamed', tempo: 2, liquid_visibility: 'gm' } })
    await flushPromises()
    expect(w.find(q('frame-name')).text()).toBe('Renamed')
    expect(vi.mocked(api.getFrame).mock.calls.length).toBeGreaterThan(reads)
  })
})
