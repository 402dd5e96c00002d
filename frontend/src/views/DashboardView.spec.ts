import { flushPromises, mount, RouterLinkStub } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Model } from '@/api/types'
import { makeModel } from '@/test/factories'
import DashboardView from './DashboardView.vue'

const q = (id: string) => `[data-testid="${id}"]`
const OFFLINE = makeModel({ id: 'off', name: 'Offline Narrator', provider: 'offline', api_endpoint: 'offline://narrator', model_id: 'narrator', is_default: true })

/** Every list endpoint answers empty, except /api/models. */
function serve(models: Model[]) {
  const fetchMock = vi.fn(async (url: string) => {
    const body = String(url).startsWith('/api/models') ? models : []
    return new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } })
  })
  vi.stubGlobal('fetch', fetchMock)
}

async function mountDashboard(models: Model[]) {
  serve(models)
  setActivePinia(createPinia())
  const wrapper = mount(DashboardView, { attachTo: document.body, global: { stubs: { RouterLink: RouterLinkStub } } })
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
