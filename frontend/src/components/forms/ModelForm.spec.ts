import { flushPromises, mount, RouterLinkStub } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { ApiError } from '@/api/http'
import { modelsApi, testModel } from '@/api/models'
import { makeModel } from '@/test/factories'
import ModelForm from './ModelForm.vue'

vi.mock('@/api/models', () => ({
  modelsApi: { list: vi.fn(), get: vi.fn(), create: vi.fn(), update: vi.fn(), patch: vi.fn(), remove: vi.fn() },
  createModels: vi.fn(),
  makeDefault: vi.fn(),
  testModel: vi.fn(),
}))

const q = (id: string) => `[data-testid="${id}"]`

function mountForm(item: ReturnType<typeof makeModel> | null = null) {
  const pinia = createPinia()
  setActivePinia(pinia)
  return mount(ModelForm, { props: { item }, global: { plugins: [pinia], stubs: { RouterLink: RouterLinkStub } } })
}

describe('ModelForm', () => {
  beforeEach(() => {
    vi.mocked(modelsApi.update).mockReset()
    vi.mocked(modelsApi.create).mockReset()
  })

  it('shows a stored key as a placeholder and keeps it when left empty', async () => {
    vi.mocked(modelsApi.update).mockImplementation(async (id, input) => makeModel({ id, ...input, api_key: undefined } as never))
    const w = mountForm(makeModel({ id: 'm1', has_api_key: true, config: { temperature: 0.7, seed: 3 } }))
    const key = w.find(q('field-api_key'))
    expect(key.attributes('type')).toBe('password')
    expect(key.attributes('placeholder')).toBe('•••• stored')
    expect((w.find(q('field-temperature')).element as HTMLInputElement).value).toBe('0.7')

    await w.find(q('field-max_tokens')).setValue('512')
    await w.find('form').trigger('submit')
    await flushPromises()
    const input = vi.mocked(modelsApi.update).mock.calls[0]?.[1]
    expect(input).not.toHaveProperty('api_key')
    // Keys the form does not edit are kept.
    expect(input?.config).toEqual({ temperature: 0.7, max_tokens: 512, seed: 3 })
  })

  it('sends a new key, or null to clear the stored one', async () => {
    vi.mocked(modelsApi.update).mockImplementation(async (id) => makeModel({ id }))
    const w = mountForm(makeModel({ id: 'm1', has_api_key: true }))
    await w.find(q('field-api_key')).setValue('sk-new')
    await w.find('form').trigger('submit')
    await flushPromises()
    expect(vi.mocked(modelsApi.update).mock.calls[0]?.[1].api_key).toBe('sk-new')

    await w.find(q('field-clear_key')).setValue(true)
    await w.find('form').trigger('submit')
    await flushPromises()
    expect(vi.mocked(modelsApi.update).mock.calls[1]?.[1].api_key).toBeNull()
  })

  it('renders server errors beside endpoint, model id and nested config fields', async () => {
    vi.mocked(modelsApi.create).mockRejectedValue(
      new ApiError(400, 'This model is already configured.', {
        model_id: ['Duplicate model for this endpoint.'],
        config: { temperature: ['Must be at most 2.'] } as never,
      }),
    )
    const w = mountForm()
    await w.find(q('field-api_endpoint')).setValue('https://api.openai.com/v1')
    await w.find(q('field-model_id')).setValue('gpt-4o')
    await w.find('form').trigger('submit')
    await flushPromises()
    expect(w.find(q('error-model_id')).text()).toBe('Duplicate model for this endpoint.')
    expect(w.find(q('form-error')).text()).toBe('This model is already configured.')
  })

  it('flags the offline narrator plainly', () => {
    const w = mountForm(makeModel({ id: 'off', provider: 'offline', api_endpoint: 'offline://narrator', has_api_key: false }))
    expect(w.find(q('offline-notice')).text()).toContain('offline narrator')
  })

  it('validates required fields and parameter ranges client-side', async () => {
    const w = mountForm()
    await w.find(q('field-temperature')).setValue('5')
    await w.find('form').trigger('submit')
    expect(w.find(q('error-api_endpoint')).exists()).toBe(true)
    expect(w.find(q('error-model_id')).exists()).toBe(true)
    expect(w.find(q('error-temperature')).text()).toContain('0 and 2')
    expect(modelsApi.create).not.toHaveBeenCalled()
  })

  it('fills in the offline narrator when it is chosen, and asks for no key', async () => {
    const w = mountForm()
    expect(w.find(q('field-api_key')).exists()).toBe(true)
    await w.find(q('field-provider')).setValue('offline')
    expect((w.find(q('field-api_endpoint')).element as HTMLInputElement).value).toBe('offline://narrator')
    expect((w.find(q('field-model_id')).element as HTMLInputElement).value).toBe('narrator')
    expect(w.find(q('field-api_endpoint')).attributes('readonly')).toBeDefined()
    expect(w.find(q('field-api_key')).exists()).toBe(false)
    await w.find(q('field-provider')).setValue('openai')
    expect((w.find(q('field-api_endpoint')).element as HTMLInputElement).value).toBe('')
    expect(w.find(q('field-api_key')).exists()).toBe(true)
  })

  it('clears a stale error banner once the connection test succeeds', async () => {
    vi.mocked(modelsApi.create).mockRejectedValue(new ApiError(400, 'The provider could not be reached.'))
    vi.mocked(testModel).mockResolvedValue({ ok: true, latency_ms: 12, context_size: null })
    const w = mountForm()
    await w.find(q('field-api_endpoint')).setValue('http://localhost:11434')
    await w.find(q('field-model_id')).setValue('llama3')
    await w.find('form').trigger('submit')
    await flushPromises()
    expect(w.find(q('form-error')).text()).toBe('The provider could not be reached.')
    await w.find(q('model-test')).trigger('click')
    await flushPromises()
    expect(w.find(q('model-test-result')).text()).toContain('Reached the provider')
    expect(w.find(q('form-error')).exists()).toBe(false)
  })
  it('asks for the context size a local server did not report, until one is typed', async () => {
    const w = mountForm(
      makeModel({ id: 'm1', provider: 'openai_compatible', api_endpoint: 'http://127.0.0.1:8090/v1', context_size_unknown: true }),
    )
    expect(w.find(q('context-size-hint')).text()).toContain('did not report its context size; enter it')
    await w.find(q('field-context_size')).setValue('4096')
    expect(w.find(q('context-size-hint')).exists()).toBe(false)
  })

  it('shows the connection test’s context size, or its hint when the server said nothing', async () => {
    const w = mountForm()
    await w.find(q('field-api_endpoint')).setValue('http://127.0.0.1:8090/v1')
    vi.mocked(testModel).mockResolvedValueOnce({ ok: true, latency_ms: 3, context_size: 4096 })
    await w.find(q('model-test')).trigger('click')
    await flushPromises()
    expect(w.find(q('model-test-result')).text()).toContain('context size 4,096 tokens')
    expect(w.find(q('context-size-hint')).exists()).toBe(false)

    vi.mocked(testModel).mockResolvedValueOnce({
      ok: true,
      latency_ms: 3,
      context_size: null,
      context_size_hint: 'The server did not report its context size; enter it (Context size).',
    })
    await w.find(q('model-test')).trigger('click')
    await flushPromises()
    expect(w.find(q('context-size-hint')).text()).toContain('did not report its context size')
  })

  it('shows the structured mode found and lets it be chosen, or left to negotiation', async () => {
    vi.mocked(modelsApi.update).mockImplementation(async (id) => makeModel({ id }))
    const w = mountForm(makeModel({ id: 'm1', config: { structured_mode: 'json_object', temperature: 0.5 } }))
    const select = w.find(q('field-structured_mode'))
    expect((select.element as HTMLSelectElement).value).toBe('json_object')
    expect(select.findAll('option').map((o) => o.text())).toEqual([
      'Auto (negotiate)',
      'JSON schema',
      'Grammar (llama.cpp: JSON object with the schema)',
      'JSON object',
      'Plain prompt',
      'Tool',
    ])
    await select.setValue('prompt')
    await w.find('form').trigger('submit')
    await flushPromises()
    expect(vi.mocked(modelsApi.update).mock.calls[0]?.[1].config).toEqual({ structured_mode: 'prompt', temperature: 0.5 })

    await select.setValue('')
    await w.find('form').trigger('submit')
    await flushPromises()
    expect(vi.mocked(modelsApi.update).mock.calls[1]?.[1].config).toEqual({ temperature: 0.5 })
  })
})

