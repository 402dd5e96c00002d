import { flushPromises, mount, RouterLinkStub } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { assistantsApi } from '@/api/assistants'
import { ApiError } from '@/api/http'
import { productionsApi } from '@/api/productions'
import { scenariosApi } from '@/api/scenarios'
import { worldsApi } from '@/api/worlds'
import { makeAssistant } from '@/test/factories'
import ProductionForm from './ProductionForm.vue'

const { crud } = vi.hoisted(() => ({
  crud: () => ({ list: vi.fn(), get: vi.fn(), create: vi.fn(), update: vi.fn(), patch: vi.fn(), remove: vi.fn() }),
}))
vi.mock('@/api/productions', () => ({ productionsApi: crud() }))
vi.mock('@/api/worlds', () => ({ worldsApi: crud() }))
vi.mock('@/api/scenarios', () => ({ scenariosApi: crud() }))
vi.mock('@/api/assistants', () => ({ assistantsApi: crud() }))

const q = (id: string) => `[data-testid="${id}"]`
const STAMP = { created_at: '', updated_at: '' }

async function mountForm() {
  const pinia = createPinia()
  setActivePinia(pinia)
  const w = mount(ProductionForm, { global: { plugins: [pinia], stubs: { RouterLink: RouterLinkStub } } })
  await flushPromises()
  return w
}

describe('ProductionForm', () => {
  beforeEach(() => {
    vi.mocked(worldsApi.list).mockResolvedValue([{ id: 'w1', name: 'Modern NYC', description: '', lore_scan_depth: 4, lore_budget: 500, ...STAMP }])
    vi.mocked(scenariosApi.list).mockResolvedValue([
      { id: 's1', name: 'First Session', description: '', ...STAMP },
      { id: 's2', name: 'Second Session', description: '', ...STAMP },
    ])
    vi.mocked(assistantsApi.list).mockResolvedValue([
      makeAssistant({ id: 'a1', display_name: 'Alice' }),
      makeAssistant({ id: 'a2', display_name: 'Bob' }),
      makeAssistant({ id: 'a3', display_name: 'Tony' }),
    ])
    vi.mocked(productionsApi.create).mockReset()
  })

  it('requires a name, a scenario and at least two assistants', async () => {
    const w = await mountForm()
    // A single world is picked for you.
    expect((w.find(q('field-world')).element as HTMLSelectElement).value).toBe('w1')
    await w.find(q('assistant-check-a1')).setValue(true)
    await w.find('form').trigger('submit')
    expect(w.find(q('error-name')).exists()).toBe(true)
    expect(w.find(q('error-scenario')).exists()).toBe(true)
    expect(w.find(q('error-assistants')).text()).toContain('at least two')
    expect(productionsApi.create).not.toHaveBeenCalled()
  })

  it('creates with world, scenario, the chosen cast and the directive toggle', async () => {
    vi.mocked(productionsApi.create).mockImplementation(async (input) => ({
      id: 'p1',
      ...input,
      world_name: '',
      scenario_name: '',
      auto_reply: false,
      turn_count: 0,
      ...STAMP,
    }))
    const w = await mountForm()
    expect(w.findAll(q('assistant-option')).map((o) => o.text())).toEqual([
      expect.stringContaining('Alice'),
      expect.stringContaining('Bob'),
      expect.stringContaining('Tony'),
    ])
    await w.find(q('field-name')).setValue('Therapy Session')
    await w.find(q('field-scenario')).setValue('s2')
    await w.find(q('assistant-check-a1')).setValue(true)
    await w.find(q('assistant-check-a3')).setValue(true)
    await w.find(q('field-show_directive')).setValue(true)
    await w.find('form').trigger('submit')
    await flushPromises()
    expect(productionsApi.create).toHaveBeenCalledWith({
      name: 'Therapy Session',
      world: 'w1',
      scenario: 's2',
      assistants: ['a1', 'a3'],
      show_directive: true,
    })
    expect(w.emitted('saved')).toHaveLength(1)
  })

  it('shows server errors beside the cast picker', async () => {
    vi.mocked(productionsApi.create).mockRejectedValue(new ApiError(400, 'Invalid.', { assistants: ['Assistant a2 is not yours.'] }))
    const w = await mountForm()
    await w.find(q('field-name')).setValue('X')
    await w.find(q('field-scenario')).setValue('s1')
    await w.find(q('assistant-check-a1')).setValue(true)
    await w.find(q('assistant-check-a2')).setValue(true)
    await w.find('form').trigger('submit')
    await flushPromises()
    expect(w.find(q('error-assistants')).text()).toBe('Assistant a2 is not yours.')
  })
})
