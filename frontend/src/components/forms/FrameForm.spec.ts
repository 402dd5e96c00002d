import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import * as frames from '@/api/frames'
import * as productions from '@/api/productions'
import { makeCast, makeDetail, makeFrameView, makeModel } from '@/test/factories'
import FrameForm from './FrameForm.vue'

vi.mock('@/api/frames', () => ({ createFrame: vi.fn() }))
vi.mock('@/api/productions', () => ({ getProduction: vi.fn(), productionsApi: { list: vi.fn(() => Promise.resolve([])) } }))
vi.mock('@/api/assistants', () => ({ assistantsApi: { list: vi.fn(() => Promise.resolve([])) } }))
vi.mock('@/api/models', () => ({
  modelsApi: { list: vi.fn(() => Promise.resolve([makeModel({ id: 'm-big', name: 'Big' })])) },
  createModels: vi.fn(),
  makeDefault: vi.fn(),
}))

const q = (id: string) => `[data-testid="${id}"]`

describe('FrameForm', () => {
  beforeEach(() => {
    setActivePinia(createPinia())
    vi.clearAllMocks()
  })

  it('says which models the frame will use unless the GM chooses', async () => {
    const cast = [
      { ...makeCast('c1', 'Alice'), model_name: 'Smol' },
      { ...makeCast('c2', 'Bob'), model_name: 'Big' },
      { ...makeCast('c3', 'Tony'), model_name: 'Smol' },
    ]
    vi.mocked(productions.getProduction).mockResolvedValue(makeDetail({ cast }))
    vi.mocked(frames.createFrame).mockResolvedValue(makeFrameView())
    const w = mount(FrameForm, { props: { production: 'prod1' }, global: { plugins: [createPinia()] } })
    await flushPromises()
    expect(w.find(q('soft-default')).text()).toBe('The cast’s model: Smol')
    expect(w.find(q('medium-default')).text()).toBe('Each character’s own model')
  })

  it('sends no model unless the GM chose one', async () => {
    vi.mocked(productions.getProduction).mockResolvedValue(makeDetail({ cast: [] }))
    vi.mocked(frames.createFrame).mockResolvedValue(makeFrameView())
    const w = mount(FrameForm, { props: { production: 'prod1' }, global: { plugins: [createPinia()] } })
    await flushPromises()
    expect(w.find(q('soft-default')).text()).toBe('Your default model') // no cast: the GM's default
    await w.find(q('field-name')).setValue('Night')
    await w.find(q('frame-form')).trigger('submit')
    await flushPromises()
    expect(frames.createFrame).toHaveBeenLastCalledWith('prod1', expect.objectContaining({ soft_model: null, medium_model: null }))
    await w.find(q('field-medium_model')).setValue('m-big')
    await w.find(q('frame-form')).trigger('submit')
    await flushPromises()
    expect(frames.createFrame).toHaveBeenLastCalledWith('prod1', expect.objectContaining({ soft_model: null, medium_model: 'm-big' }))
  })
})
