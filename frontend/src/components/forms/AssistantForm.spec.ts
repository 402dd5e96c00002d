import { flushPromises, mount, RouterLinkStub } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { assistantsApi } from '@/api/assistants'
import { ApiError, errorFromBody } from '@/api/http'
import { modelsApi } from '@/api/models'
import { personasApi } from '@/api/personas'
import { getPromptControls } from '@/api/promptControls'
import { resetPromptControls } from '@/composables/usePromptControls'
import { makeAssistant, makeModel, makePersona } from '@/test/factories'
import AssistantForm from './AssistantForm.vue'

const crud = vi.hoisted(() => () => ({ list: vi.fn(), get: vi.fn(), create: vi.fn(), update: vi.fn(), patch: vi.fn(), remove: vi.fn() }))
vi.mock('@/api/assistants', () => ({ assistantsApi: crud() }))
vi.mock('@/api/personas', () => ({ personasApi: crud(), uploadAvatar: vi.fn() }))
vi.mock('@/api/models', () => ({ modelsApi: crud(), createModels: vi.fn(), makeDefault: vi.fn(), testModel: vi.fn() }))
vi.mock('@/api/promptControls', () => ({ getPromptControls: vi.fn() }))

const CONTROLS = {
  presets: [
    { name: 'Balanced', params: { temperature: 0.8, top_p: 0.95, frequency_penalty: 0, presence_penalty: 0 } },
    { name: 'Creative', params: { temperature: 1.1, top_p: 0.98, frequency_penalty: 0.3, presence_penalty: 0.4 } },
  ],
  default_template: '{{knowledge}}\n\n{{lore}}\n\nYou are {{char}}.',
  placeholders: ['char', 'user', 'director', 'world', 'scenario', 'knowledge', 'lore'].map((name) => ({ name, description: `the ${name}` })),
}

const q = (id: string) => `[data-testid="${id}"]`
const value = (w: ReturnType<typeof mount>, id: string) => (w.find(q(id)).element as HTMLInputElement).value

async function mountForm(item: ReturnType<typeof makeAssistant> | null = null) {
  const pinia = createPinia()
  setActivePinia(pinia)
  const w = mount(AssistantForm, { props: { item }, global: { plugins: [pinia], stubs: { RouterLink: RouterLinkStub } } })
  await flushPromises()
  return w
}

describe('AssistantForm', () => {
  beforeEach(() => {
    resetPromptControls()
    vi.mocked(getPromptControls).mockResolvedValue(CONTROLS)
    vi.mocked(personasApi.list).mockResolvedValue([makePersona({ id: 'p1', name: 'Alice' })])
    vi.mocked(modelsApi.list).mockResolvedValue([makeModel({ id: 'm1', is_default: true })])
    vi.mocked(assistantsApi.update).mockReset()
    vi.mocked(assistantsApi.create).mockReset()
  })

  it('keeps the advanced settings collapsed until asked, saying what is set', async () => {
    const w = await mountForm(makeAssistant({ id: 'a1', display_name: 'Alice', config_override: { temperature: 0.5, stop: ['END'] } }))
    const advanced = w.find(q('assistant-advanced')).element as HTMLDetailsElement
    expect(advanced.open).toBe(false)
    expect(w.find(q('assistant-advanced-toggle')).text()).toContain('(2 set)')
    expect(value(w, 'field-temperature')).toBe('0.5')
  })

  it('fills a preset in, keeps it editable, and sends every setting and the template', async () => {
    vi.mocked(assistantsApi.update).mockImplementation(async (id, input) => makeAssistant({ id, display_name: 'Alice', ...input }))
    const w = await mountForm(makeAssistant({ id: 'a1', display_name: 'Alice', config_override: { seed_like: 1 } as never }))
    await w.find(q('field-preset')).setValue('Creative')
    expect(value(w, 'field-temperature')).toBe('1.1')
    expect(value(w, 'field-presence_penalty')).toBe('0.4')
    expect(value(w, 'field-preset')).toBe('Creative')
    await w.find(q('field-temperature')).setValue('0.9') // a starting point, edited
    expect(value(w, 'field-preset')).toBe('') // shown as custom now
    await w.find(q('field-context_size')).setValue('4096')
    await w.find(q('field-max_tokens')).setValue('300')
    await w.find(q('field-stop')).setValue('\\nBob:\nEND\n')
    await w.find(q('template-default')).trigger('click')
    expect(value(w, 'field-system_prompt_template')).toBe(CONTROLS.default_template)
    await w.find(q('field-system_prompt_template')).setValue('You are {{char}}. {{knowledge}}')
    await w.find('form').trigger('submit')
    await flushPromises()
    expect(vi.mocked(assistantsApi.update).mock.calls[0]?.[1]).toEqual({
      persona: 'p1',
      model: 'm1',
      name: '',
      config_override: {
        seed_like: 1, // keys the form does not edit are kept
        temperature: 0.9,
        top_p: 0.98,
        frequency_penalty: 0.3,
        presence_penalty: 0.4,
        context_size: 4096,
        max_tokens: 300,
        stop: ['\nBob:', 'END'],
      },
      system_prompt_template: 'You are {{char}}. {{knowledge}}',
    })
  })

  it('names unknown placeholders and bad ranges before sending, opening the section', async () => {
    const w = await mountForm(makeAssistant({ id: 'a1', display_name: 'Alice' }))
    await w.find(q('field-system_prompt_template')).setValue('{{char}} knows {{secret_of_bob}}')
    await w.find(q('field-top_p')).setValue('1.5')
    await w.find(q('field-stop')).setValue('a\nb\nc\nd\ne')
    await w.find('form').trigger('submit')
    await flushPromises()
    expect(w.find(q('error-system_prompt_template')).text()).toBe('Unknown placeholder: {{secret_of_bob}}.')
    expect(w.find(q('error-top_p')).text()).toBe('Between 0 and 1.')
    expect(w.find(q('error-stop')).text()).toBe('At most 4 stop sequences.')
    expect((w.find(q('assistant-advanced')).element as HTMLDetailsElement).open).toBe(true)
    expect(assistantsApi.update).not.toHaveBeenCalled()
  })

  it('shows the server’s per-setting errors beside their fields', async () => {
    // As the server sends it: one message per setting, nested under config_override.
    vi.mocked(assistantsApi.update).mockRejectedValue(
      errorFromBody(400, {
        detail: 'Invalid input.',
        errors: { config_override: { context_size: ['Input should be greater than or equal to 512.'] } },
      }),
    )
    const w = await mountForm(makeAssistant({ id: 'a1', display_name: 'Alice' }))
    await w.find('form').trigger('submit')
    await flushPromises()
    expect(w.find(q('error-context_size')).text()).toBe('Input should be greater than or equal to 512.')
    expect((w.find(q('assistant-advanced')).element as HTMLDetailsElement).open).toBe(true)
  })

  it('says so when the presets cannot be loaded, and still saves', async () => {
    resetPromptControls()
    vi.mocked(getPromptControls).mockRejectedValue(new ApiError(0, 'The server could not be reached.'))
    vi.mocked(assistantsApi.update).mockImplementation(async (id, input) => makeAssistant({ id, display_name: 'A', ...input }))
    const w = await mountForm(makeAssistant({ id: 'a1', display_name: 'Alice' }))
    expect(w.find(q('field-preset')).attributes('disabled')).toBeDefined()
    expect(w.text()).toContain('The server could not be reached.')
    await w.find('form').trigger('submit')
    await flushPromises()
    expect(assistantsApi.update).toHaveBeenCalled()
  })
})
