import { flushPromises, mount } from '@vue/test-utils'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { addContent, editContent } from '@/api/frames'
import { ApiError } from '@/api/http'
import type { ContentEntry } from '@/api/types'
import WorldContent from './WorldContent.vue'

vi.mock('@/api/frames', () => ({ addContent: vi.fn(), editContent: vi.fn() }))

const q = (id: string) => `[data-testid="${id}"]`
const HARBOUR: ContentEntry = {
  id: 'c1',
  type: 'location',
  name: 'The Old Harbour',
  data: { description: 'Fog and gulls.', exits: 'North: the market' },
  pscale: 0,
  edited: false,
  source_liquid: null,
  created_at: '2025-01-01T00:00:01Z',
}

describe('WorldContent', () => {
  beforeEach(() => {
    vi.mocked(addContent).mockReset()
    vi.mocked(editContent).mockReset()
  })

  it('shows a player the entries, newest first, with their details and no way to change them', () => {
    const market = { ...HARBOUR, id: 'c2', name: 'The Market', data: { description: 'Stalls.' } }
    const w = mount(WorldContent, { props: { frameId: 'f1', entries: [HARBOUR, market] } })
    expect(w.findAll(q('content-entry')).map((e) => e.attributes('data-content-id'))).toEqual(['c2', 'c1'])
    expect(w.text()).toContain('North: the market')
    expect(w.find(q('content-new')).exists()).toBe(false)
    expect(w.find(q('content-edit')).exists()).toBe(false)
  })

  it('lets the GM add an entry and keeps the form with the server’s refusal', async () => {
    vi.mocked(addContent).mockRejectedValueOnce(new ApiError(409, 'This frame already has a location called “The Old Harbour”: edit that one instead.'))
    vi.mocked(addContent).mockResolvedValueOnce({ ...HARBOUR, id: 'c9', name: 'The Lighthouse' })
    const w = mount(WorldContent, { props: { frameId: 'f1', entries: [HARBOUR], gm: true } })
    await w.find(q('content-new')).trigger('click')
    await w.find(q('content-name')).setValue('The Old Harbour')
    await w.find(q('content-description')).setValue('Again.')
    await w.find(q('content-form')).trigger('submit')
    await flushPromises()
    expect(w.find(q('content-error')).text()).toContain('edit that one instead')
    await w.find(q('content-name')).setValue('The Lighthouse')
    await w.find(q('content-form')).trigger('submit')
    await flushPromises()
    expect(addContent).toHaveBeenLastCalledWith('f1', { type: 'location', name: 'The Lighthouse', data: { description: 'Again.' }, pscale: 0 })
    expect(w.emitted('saved')?.[0]?.[0]).toMatchObject({ id: 'c9' })
    expect(w.find(q('content-form')).exists()).toBe(false)
  })

  it('edits keep the entry’s other fields', async () => {
    vi.mocked(editContent).mockResolvedValue({ ...HARBOUR, edited: true })
    const w = mount(WorldContent, { props: { frameId: 'f1', entries: [HARBOUR], gm: true } })
    await w.find(q('content-edit')).trigger('click')
    await w.find(q('content-description')).setValue('Burnt down.')
    await w.find(q('content-form')).trigger('submit')
    await flushPromises()
    expect(editContent).toHaveBeenCalledWith('f1', 'c1', {
      type: 'location',
      name: 'The Old Harbour',
      data: { description: 'Burnt down.', exits: 'North: the market' },
      pscale: 0,
    })
  })
})
