import { flushPromises, mount, RouterLinkStub } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { ApiError } from '@/api/http'
import { createModels, modelsApi, testModel } from '@/api/models'
import { makeModel } from '@/test/factories'
import ModelWizard from './ModelWizard.vue'

vi.mock('@/api/models', () => ({
  modelsApi: { list: vi.fn(), get: vi.fn(), create: vi.fn(), update: vi.fn(), patch: vi.fn(), remove: vi.fn() },
  createModels: vi.fn(),
  makeDefault: vi.fn(),
  testModel: vi.fn(),
}))

const ok = (body: unknown) => Promise.resolve(new Response(JSON.stringify(body), { status: 200 }))

function mountWizard(fetchImpl: typeof fetch) {
  const pinia = createPinia()
  setActivePinia(pinia)
  return mount(ModelWizard, {
    props: { fetchImpl },
    global: { plugins: [pinia], stubs: { RouterLink: RouterLinkStub } },
  })
}

const q = (id: string) => `[data-testid="${id}"]`

describe('ModelWizard', () => {
  beforeEach(() => {
    vi.mocked(createModels).mockReset()
    vi.mocked(testModel).mockReset()
    vi.mocked(modelsApi.list).mockReset().mockResolvedValue([])
  })

  it('marks the models already added at this endpoint and skips them when selecting all', async () => {
    vi.mocked(modelsApi.list).mockResolvedValue([
      makeModel({ id: 'old', name: 'My GPT-4o', model_id: 'gpt-4o', api_endpoint: 'https://API.openai.com/v1/' }),
      makeModel({ id: 'elsewhere', name: 'Other', model_id: 'o3-mini', api_endpoint: 'https://proxy.example/v1' }),
    ])
    vi.mocked(createModels).mockImplementation(async (items) => items.map((i, n) => makeModel({ id: `m${n}`, model_id: i.model_id })))
    const fetchImpl = vi.fn(() => ok({ data: [{ id: 'gpt-4o' }, { id: 'gpt-4o-mini' }, { id: 'o3-mini' }] }))
    const w = mountWizard(fetchImpl as unknown as typeof fetch)
    await flushPromises()
    await w.find(q('wizard-api-key')).setValue('sk')
    await w.find(q('wizard-next')).trigger('click')
    await flushPromises()
    await w.find(q('wizard-next')).trigger('click')

    const rows = w.findAll(q('wizard-model-option'))
    expect(rows[0]!.find(q('wizard-already-added')).text()).toBe('Already added as “My GPT-4o”')
    // The same id at another endpoint is another model.
    expect(rows.filter((r) => r.find(q('wizard-already-added')).exists())).toHaveLength(1)

    await w.find(q('wizard-select-all')).setValue(true)
    expect(w.find(q('wizard-selected-count')).text()).toBe('2 of 3 selected')
    expect((w.find(q('wizard-select-all')).element as HTMLInputElement).checked).toBe(true)
    await w.find(q('wizard-submit')).trigger('click')
    await flushPromises()
    expect(vi.mocked(createModels).mock.calls[0]![0].map((i) => i.model_id)).toEqual(['gpt-4o-mini', 'o3-mini'])
  })

  it('asks for the key OpenAI needs before moving on', async () => {
    const w = mountWizard(vi.fn())
    expect(w.find(q('wizard-step-provider')).exists()).toBe(true)
    await w.find(q('wizard-next')).trigger('click')
    expect(w.find(q('error-api_key')).text()).toContain('OpenAI needs an API key')
    expect(w.find(q('wizard-step-provider')).exists()).toBe(true)
  })

  it('discovers in the browser, keeps choices going back and forth, and bulk adds', async () => {
    const fetchImpl = vi.fn(() => ok({ data: [{ id: 'gpt-4o' }, { id: 'gpt-4o-mini' }, { id: 'o3-mini' }] }))
    vi.mocked(createModels).mockImplementation(async (items) =>
      items.map((i, n) => makeModel({ id: `m${n}`, model_id: i.model_id, name: i.model_id })),
    )
    const w = mountWizard(fetchImpl as unknown as typeof fetch)

    await w.find(q('wizard-api-key')).setValue('sk-test')
    await w.find(q('wizard-next')).trigger('click')
    await flushPromises()
    expect(w.find(q('wizard-step-discover')).exists()).toBe(true)
    expect(w.find(q('wizard-found')).text()).toContain('3')
    expect(fetchImpl).toHaveBeenCalledWith('https://api.openai.com/v1/models', expect.objectContaining({ headers: { Authorization: 'Bearer sk-test' } }))

    await w.find(q('wizard-next')).trigger('click')
    expect(w.find(q('wizard-step-select')).exists()).toBe(true)
    const options = w.findAll(q('wizard-model-option'))
    expect(options.map((o) => o.attributes('data-model-id'))).toEqual(['gpt-4o', 'gpt-4o-mini', 'o3-mini'])
    await options[0]!.find('input').setValue(true)
    await options[2]!.find('input').setValue(true)

    // Back to the start and forward again: nothing is lost, nothing is fetched twice.
    await w.find(q('wizard-back')).trigger('click')
    await w.find(q('wizard-back')).trigger('click')
    expect((w.find(q('wizard-api-key')).element as HTMLInputElement).value).toBe('sk-test')
    expect((w.find(q('wizard-endpoint')).element as HTMLInputElement).value).toBe('https://api.openai.com/v1')
    await w.find(q('wizard-next')).trigger('click')
    await w.find(q('wizard-next')).trigger('click')
    await flushPromises()
    expect(fetchImpl).toHaveBeenCalledTimes(1)
    const checked = w
      .findAll(q('wizard-model-option'))
      .filter((o) => (o.find('input').element as HTMLInputElement).checked)
      .map((o) => o.attributes('data-model-id'))
    expect(checked).toEqual(['gpt-4o', 'o3-mini'])
    expect(w.find(q('wizard-submit')).text()).toContain('Add 2 models')

    await w.find(q('wizard-submit')).trigger('click')
    await flushPromises()
    expect(createModels).toHaveBeenCalledWith([
      { provider: 'openai', api_endpoint: 'https://api.openai.com/v1', model_id: 'gpt-4o', api_key: 'sk-test' },
      { provider: 'openai', api_endpoint: 'https://api.openai.com/v1', model_id: 'o3-mini', api_key: 'sk-test' },
    ])
    expect(w.emitted('done')?.[0]?.[0]).toHaveLength(2)
  })

  it('says plainly when the browser cannot reach the provider and offers the server test', async () => {
    const fetchImpl = vi.fn(() => Promise.reject(new TypeError('Failed to fetch')))
    vi.mocked(testModel).mockResolvedValue({ ok: true, latency_ms: 12, context_size: null, models: ['llama3:8b', 'qwen2.5:7b'] })
    const w = mountWizard(fetchImpl as unknown as typeof fetch)

    await w.find(q('wizard-preset-ollama')).trigger('click')
    expect((w.find(q('wizard-endpoint')).element as HTMLInputElement).value).toBe('http://localhost:11434')
    await w.find(q('wizard-next')).trigger('click')
    await flushPromises()

    const error = w.find(q('wizard-error'))
    expect(error.text()).toContain('could not reach http://localhost:11434/api/tags')
    expect(error.text()).toContain('CORS')
    expect((w.find(q('wizard-next')).element as HTMLButtonElement).disabled).toBe(true)

    await w.find(q('wizard-server-test')).trigger('click')
    await flushPromises()
    expect(testModel).toHaveBeenCalledWith({ api_endpoint: 'http://localhost:11434', api_key: undefined, provider: 'ollama' })
    expect(w.find(q('wizard-found')).text()).toContain('listed by the server')

    await w.find(q('wizard-next')).trigger('click')
    expect(w.findAll(q('wizard-model-option')).map((o) => o.attributes('data-model-id'))).toEqual(['llama3:8b', 'qwen2.5:7b'])
  })

  it('shows the server test failure and allows typing a model id by hand', async () => {
    const fetchImpl = vi.fn(() => Promise.resolve(new Response('{}', { status: 401 })))
    vi.mocked(testModel).mockResolvedValue({ ok: false, latency_ms: 5, context_size: null, error: 'Invalid API key' })
    const w = mountWizard(fetchImpl as unknown as typeof fetch)
    await w.find(q('wizard-preset-custom')).trigger('click')
    await w.find(q('wizard-endpoint')).setValue('https://llm.example/v1')
    await w.find(q('wizard-next')).trigger('click')
    await flushPromises()
    expect(w.find(q('wizard-error')).text()).toContain('HTTP 401')

    await w.find(q('wizard-server-test')).trigger('click')
    await flushPromises()
    expect(w.find(q('wizard-server-result')).text()).toContain('Invalid API key')

    await w.find(q('wizard-manual-id')).setValue('my-model')
    await w.find(q('wizard-manual-add')).trigger('click')
    await w.find(q('wizard-next')).trigger('click')
    const option = w.find(q('wizard-model-option'))
    expect(option.attributes('data-model-id')).toBe('my-model')
    expect((option.find('input').element as HTMLInputElement).checked).toBe(true)
  })

  it('shows per-item errors from the bulk add beside each model', async () => {
    const fetchImpl = vi.fn(() => ok({ data: [{ id: 'a' }, { id: 'b' }] }))
    vi.mocked(createModels).mockRejectedValue(
      new ApiError(400, 'Some models are invalid.', [{}, { model_id: ['Already configured for this endpoint.'] }]),
    )
    const w = mountWizard(fetchImpl as unknown as typeof fetch)
    await w.find(q('wizard-api-key')).setValue('sk')
    await w.find(q('wizard-next')).trigger('click')
    await flushPromises()
    await w.find(q('wizard-next')).trigger('click')
    await w.find(q('wizard-select-all')).setValue(true)
    await w.find(q('wizard-submit')).trigger('click')
    await flushPromises()

    const rows = w.findAll(q('wizard-model-option'))
    expect(rows[0]!.find(q('wizard-item-error')).exists()).toBe(false)
    expect(rows[1]!.find(q('wizard-item-error')).text()).toBe('Already configured for this endpoint.')
    expect(w.find(q('form-error')).text()).toContain('none were saved')
    expect(w.emitted('done')).toBeUndefined()
  })

  it('filters the list and selects all shown', async () => {
    const fetchImpl = vi.fn(() => ok({ data: [{ id: 'gpt-4o' }, { id: 'gpt-4o-mini' }, { id: 'o3-mini' }] }))
    const w = mountWizard(fetchImpl as unknown as typeof fetch)
    await w.find(q('wizard-api-key')).setValue('sk')
    await w.find(q('wizard-next')).trigger('click')
    await flushPromises()
    await w.find(q('wizard-next')).trigger('click')
    await w.find(q('wizard-filter')).setValue('mini')
    expect(w.findAll(q('wizard-model-option'))).toHaveLength(2)
    await w.find(q('wizard-select-all')).setValue(true)
    expect(w.find(q('wizard-selected-count')).text()).toBe('2 of 3 selected')
  })
})
