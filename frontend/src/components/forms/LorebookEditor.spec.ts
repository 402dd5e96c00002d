import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { affiliationsApi } from '@/api/affiliations'
import { ApiError, errorFromBody } from '@/api/http'
import { loreApi } from '@/api/lore'
import { personasApi } from '@/api/personas'
import type { LoreEntry } from '@/api/types'
import { makeAffiliation, makePersona } from '@/test/factories'
import LorebookEditor from './LorebookEditor.vue'

const crud = vi.hoisted(() => () => ({ list: vi.fn(), get: vi.fn(), create: vi.fn(), update: vi.fn(), patch: vi.fn(), remove: vi.fn() }))
vi.mock('@/api/affiliations', () => ({ affiliationsApi: crud() }))
vi.mock('@/api/personas', () => ({ personasApi: crud(), uploadAvatar: vi.fn() }))
vi.mock('@/api/lore', () => ({ loreApi: { list: vi.fn(), create: vi.fn(), patch: vi.fn(), remove: vi.fn() } }))

const q = (id: string) => `[data-testid="${id}"]`
const STAMP = { created_at: '2025-01-01T00:00:00Z', updated_at: '2025-01-01T00:00:00Z' }

function entry(over: Partial<LoreEntry> & { id: string }): LoreEntry {
  return { world: 'w1', keys: ['vault'], content: 'It opens at dawn.', enabled: true, layer: 'universal', affiliation: null, persona: null, priority: 0, ...STAMP, ...over }
}

async function mountEditor() {
  setActivePinia(createPinia())
  const w = mount(LorebookEditor, { props: { worldId: 'w1', scanDepth: 4 } })
  await flushPromises()
  return w
}

describe('LorebookEditor', () => {
  beforeEach(() => {
    vi.mocked(loreApi.list).mockReset()
    vi.mocked(loreApi.create).mockReset()
    vi.mocked(loreApi.remove).mockReset()
    vi.mocked(affiliationsApi.list).mockResolvedValue([makeAffiliation({ id: 'g1', name: 'Guild' })])
    vi.mocked(personasApi.list).mockResolvedValue([makePersona({ id: 'p1', name: 'Vera' })])
  })

  it('lists the entries, higher priority first, saying who may know each', async () => {
    vi.mocked(loreApi.list).mockResolvedValue([
      entry({ id: 'e1', keys: ['harbor'] }),
      entry({ id: 'e2', keys: ['vault', 'sun stone'], layer: 'affiliation', affiliation: 'g1', priority: 5 }),
      entry({ id: 'e3', layer: 'persona', persona: 'p1', enabled: false }),
    ])
    const w = await mountEditor()
    const who = w.findAll(q('lore-who')).map((n) => n.text())
    expect(who).toEqual(['Members of Guild', 'Everyone', 'Only Vera'])
    expect(w.findAll(q('lore-entry'))[0]?.text()).toContain('sun stone')
    expect(w.findAll(q('lore-entry'))[2]?.text()).toContain('Disabled')
    expect(w.text()).toContain('the last 4 turns')
  })

  it('adds an entry known to one affiliation, asking for the group first', async () => {
    vi.mocked(loreApi.list).mockResolvedValue([])
    vi.mocked(loreApi.create).mockImplementation(async (_world, input) => entry({ id: 'new', ...input }))
    const w = await mountEditor()
    expect(w.find(q('lore-empty')).exists()).toBe(true)
    await w.find(q('lore-add')).trigger('click')
    await w.find(q('lore-field-keys')).setValue(' vault ,  sun stone,')
    await w.find(q('lore-field-content')).setValue('The vault has a false floor.')
    await w.find(q('lore-field-layer')).setValue('affiliation')
    await w.find(q('lore-save')).trigger('click')
    expect(w.find(q('error-affiliation')).text()).toContain('Choose the affiliation')
    expect(loreApi.create).not.toHaveBeenCalled()

    await w.find(q('lore-field-affiliation')).setValue('g1')
    await w.find(q('lore-save')).trigger('click')
    await flushPromises()
    expect(loreApi.create).toHaveBeenCalledWith('w1', {
      keys: ['vault', 'sun stone'],
      content: 'The vault has a false floor.',
      enabled: true,
      layer: 'affiliation',
      affiliation: 'g1',
      persona: null,
      priority: 0,
    })
    expect(w.find(q('lore-editor')).exists()).toBe(false)
    expect(w.find(q('lore-who')).text()).toBe('Members of Guild')
  })

  it('shows the server’s field errors in the editor', async () => {
    vi.mocked(loreApi.list).mockResolvedValue([])
    vi.mocked(loreApi.create).mockRejectedValue(
      errorFromBody(400, { detail: 'Invalid input.', errors: { content: ['Ensure this field has no more than 20000 characters.'] } }),
    )
    const w = await mountEditor()
    await w.find(q('lore-add')).trigger('click')
    await w.find(q('lore-field-keys')).setValue('vault')
    await w.find(q('lore-field-content')).setValue('x')
    await w.find(q('lore-save')).trigger('click')
    await flushPromises()
    expect(w.find(q('error-content')).text()).toContain('no more than 20000')
    expect(w.find(q('lore-editor')).exists()).toBe(true)
  })

  it('deletes an entry only after a confirmation', async () => {
    vi.mocked(loreApi.list).mockResolvedValue([entry({ id: 'e1' })])
    vi.mocked(loreApi.remove).mockResolvedValue(undefined)
    const w = await mountEditor()
    await w.find(q('lore-delete')).trigger('click')
    expect(loreApi.remove).not.toHaveBeenCalled()
    await w.find(q('lore-delete-confirm')).trigger('click')
    await flushPromises()
    expect(loreApi.remove).toHaveBeenCalledWith('w1', 'e1')
    expect(w.findAll(q('lore-who'))).toHaveLength(0)
  })

  it('says when the lorebook cannot be loaded, and retries', async () => {
    vi.mocked(loreApi.list).mockRejectedValueOnce(new ApiError(0, 'The server could not be reached.'))
    const w = await mountEditor()
    expect(w.find(q('lore-error')).text()).toContain('could not be reached')
    vi.mocked(loreApi.list).mockResolvedValue([entry({ id: 'e1' })])
    await w.find(q('lore-error')).find('button').trigger('click')
    await flushPromises()
    expect(w.findAll(q('lore-who'))).toHaveLength(1)
  })
})
