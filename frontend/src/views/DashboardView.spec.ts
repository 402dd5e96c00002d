import { flushPromises, mount, RouterLinkStub } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { routerKey } from 'vue-router'
import type { FrameSummary, Model } from '@/api/types'
import { makeDetail, makeModel } from '@/test/factories'
import DashboardView from './DashboardView.vue'

const q = (id: string) => `[data-testid="${id}"]`
const OFFLINE = makeModel({ id: 'off', name: 'Offline Narrator', provider: 'offline', api_endpoint: 'offline://narrator', model_id: 'narrator', is_default: true })

interface Served {
  frames?: FrameSummary[] | 'fail'
  productions?: unknown[]
}

/** Every list endpoint answers empty, except /api/models, and /api/frames and /api/productions when given. */
function serve(models: Model[], { frames = [], productions = [] }: Served = {}) {
  const fetchMock = vi.fn(async (url: string) => {
    const path = String(url)
    if (path.startsWith('/api/frames') && frames === 'fail')
      return new Response(JSON.stringify({ detail: 'Server busy.' }), { status: 503, headers: { 'Content-Type': 'application/json' } })
    const body = path.startsWith('/api/models') ? models : path.startsWith('/api/frames') ? frames : path.startsWith('/api/productions') ? productions : []
    return new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } })
  })
  vi.stubGlobal('fetch', fetchMock)
}

async function mountDashboard(models: Model[], served: Served = {}) {
  serve(models, served)
  setActivePinia(createPinia())
  const wrapper = mount(DashboardView, {
    attachTo: document.body,
    global: { stubs: { RouterLink: RouterLinkStub }, provide: { [routerKey as symbol]: { push: vi.fn() } } },
  })
  await flushPromises()
  return wrapper
}

describe('DashboardView: connect a real model', () => {
  afterEach(() => {
    vi.unstubAllGlobals()
    document.body.innerHTML = ''
  })

  it('offers Ollama, OpenAI and Anthropic while only the offline narrator exists, and says who writes until then', async () => {
    const w = await mountDashboard([OFFLINE])
    const card = w.find(q('connect-model'))
    expect(card.exists()).toBe(true)
    expect(card.text()).toContain('Connect a real model')
    expect(card.text()).toContain('offline narrator')
    const offered = ['ollama', 'llamacpp', 'openai', 'anthropic']
    expect(offered.map((k) => w.find(q(`connect-${k}`)).exists())).toEqual([true, true, true, true])
    expect(w.find(q('connect-llamacpp')).text()).toContain('make model-server')
    expect(w.find(q('connect-ollama')).text()).toContain('127.0.0.1:11434')
    // No emoji: the icons are SVGs.
    expect(card.find('svg.app-icon').exists()).toBe(true)
    w.unmount()
  })

  it('opens the model wizard on the chosen provider, pre-filled', async () => {
    const w = await mountDashboard([OFFLINE])
    await w.find(q('connect-ollama')).trigger('click')
    await flushPromises()
    const modal = document.body.querySelector(q('connect-wizard-modal'))
    expect(modal).not.toBeNull()
    expect(modal!.querySelector(q('wizard-preset-ollama'))!.getAttribute('aria-checked')).toBe('true')
    expect((modal!.querySelector(q('wizard-endpoint')) as HTMLInputElement).value).toBe('http://127.0.0.1:11434')

    await w.find(q('connect-llamacpp')).trigger('click')
    await flushPromises()
    const local = document.body.querySelector(q('connect-wizard-modal'))!
    expect(local.querySelector(q('wizard-preset-custom'))!.getAttribute('aria-checked')).toBe('true')
    expect((local.querySelector(q('wizard-endpoint')) as HTMLInputElement).value).toBe('http://127.0.0.1:8090/v1')

    await w.find(q('connect-anthropic')).trigger('click')
    await flushPromises()
    const again = document.body.querySelector(q('connect-wizard-modal'))!
    expect(again.querySelector(q('wizard-preset-anthropic'))!.getAttribute('aria-checked')).toBe('true')
    expect((again.querySelector(q('wizard-endpoint')) as HTMLInputElement).value).toBe('https://api.anthropic.com/v1')
    w.unmount()
  })

  it('hides the card once a real model exists', async () => {
    const w = await mountDashboard([OFFLINE, makeModel({ id: 'gpt' })])
    expect(w.find(q('count-models')).text()).toContain('2')
    expect(w.find(q('connect-model')).exists()).toBe(false)
    w.unmount()
  })
})

const frame = (over: Partial<FrameSummary> & { id: string }): FrameSummary => ({
  name: `Scene ${over.id}`,
  production: 'prod1',
  production_name: 'Therapy Session',
  status: 'open',
  mode: 'per_character',
  is_gm: false,
  created_at: '2026-01-01T00:00:00Z',
  active_at: '2026-01-01T00:00:00Z',
  my_seat: { id: `seat-${over.id}`, name: 'Alice Thompson', avatar_url: '' },
  waiting_for: [],
  my_turn: false,
  ...over,
})
const linkTo = (el: { findComponent: ReturnType<typeof mount>['findComponent'] }) => el.findComponent(RouterLinkStub).props('to')

describe('DashboardView: your frames', () => {
  afterEach(() => {
    vi.unstubAllGlobals()
    document.body.innerHTML = ''
  })

  it('shows a player who came by an invite link, with no production, their frame first as a card of its own', async () => {
    const joined = frame({ id: 'joined', name: 'Harbour at night', active_at: '2026-01-01T00:00:00Z' })
    const old = frame({ id: 'old', status: 'closed', active_at: '2026-02-01T00:00:00Z' })
    const w = await mountDashboard([OFFLINE], { frames: [old, joined] })
    const hero = w.find(q('frame-hero'))
    expect(hero.attributes('data-frame-id')).toBe('joined')
    expect(hero.text()).toContain('Harbour at night')
    expect(hero.text()).toContain('You play Alice Thompson')
    expect(hero.findComponent(RouterLinkStub).props('to')).toBe('/frames/joined')
    // It sits above everything else on the page.
    const page = w.find(q('page-dashboard')).html()
    expect(page.indexOf('frame-hero')).toBeLessThan(page.indexOf('connect-model'))
    expect(w.findAll(q('frame-item')).map((i) => i.attributes('data-frame-id'))).toEqual(['old'])
    // No production of their own: no "Play with friends", but how to get one.
    expect(w.find(q('play-with-friends')).exists()).toBe(false)
    expect(w.find(q('frames-no-production')).text()).toContain('Productions')
    expect(w.find(q('frames-no-production')).text()).toContain('demo')
    w.unmount()
  })

  it('lists the frames I run or sit in, my turn first, then live ones, most recently active first', async () => {
    const frames = [
      frame({ id: 'closed', status: 'closed', active_at: '2026-05-01T00:00:00Z' }),
      frame({ id: 'gm', is_gm: true, my_seat: null, waiting_for: ['Bob Wilson', 'Tony'], active_at: '2026-04-01T00:00:00Z' }),
      frame({ id: 'paused', status: 'paused', active_at: '2026-06-01T00:00:00Z' }),
      frame({ id: 'live', active_at: '2026-03-01T00:00:00Z' }),
      frame({ id: 'turn', my_turn: true, waiting_for: ['Alice Thompson'], active_at: '2025-01-01T00:00:00Z' }),
    ]
    const w = await mountDashboard([OFFLINE], { frames, productions: [makeDetail()] })
    const hero = w.find(q('frame-hero'))
    expect(hero.attributes('data-frame-id')).toBe('turn')
    expect(hero.text()).toContain('Your turn')
    const items = w.findAll(q('frame-item'))
    expect(items.map((i) => i.attributes('data-frame-id'))).toEqual(['live', 'gm', 'paused', 'closed'])
    expect(items.map((i) => i.find(q('frame-status')).text())).toEqual(['live', 'live', 'paused', 'closed'])
    const [live, gm] = [items[0]!, items[1]!]
    expect(live.text()).toContain('as Alice Thompson')
    expect(linkTo(live)).toBe('/frames/live')
    expect(gm.text()).toContain('GM')
    expect(gm.find(q('frame-waiting')).text()).toBe('Waiting for Bob Wilson and Tony')
    expect(linkTo(gm)).toBe('/frames/gm/gm')
    expect(w.find(q('frames-no-production')).exists()).toBe(false)
    w.unmount()
  })

  it('offers to play with friends: a new frame of one of my productions', async () => {
    const w = await mountDashboard([OFFLINE], { productions: [makeDetail()] })
    expect(w.find(q('frames-none')).text()).toContain('No frames yet')
    expect(w.find(q('frame-hero')).exists()).toBe(false)
    await w.find(q('play-with-friends')).trigger('click')
    await flushPromises()
    const modal = document.body.querySelector(q('frame-modal'))
    expect(modal).not.toBeNull()
    expect(modal!.textContent).toContain('Play with friends')
    expect(modal!.querySelector('select')).not.toBeNull() // which production
    w.unmount()
  })

  it('tells a new user with nothing yet how a frame reaches them', async () => {
    const w = await mountDashboard([OFFLINE])
    expect(w.find(q('frames-none')).text()).toContain('invite link')
    expect(w.find(q('frames-no-production')).exists()).toBe(true)
    w.unmount()
  })

  it('says when the frames cannot be read, and tries again', async () => {
    const w = await mountDashboard([OFFLINE], { frames: 'fail' })
    expect(w.find(q('frames-error')).text()).toContain('Server busy.')
    serve([OFFLINE], { frames: [frame({ id: 'back' })], productions: [makeDetail()] })
    await w.find(`${q('frames-error')} button`).trigger('click')
    await flushPromises()
    expect(w.find(q('frames-error')).exists()).toBe(false)
    expect(w.find(q('frame-hero')).attributes('data-frame-id')).toBe('back')
    w.unmount()
  })
})
