import { type DOMWrapper, flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { CharacterSheet, SeatState } from '@/api/types'
import CharacterSheetPanel from './CharacterSheetPanel.vue'

const getSeatSheet = vi.fn<(frameId: string, seatId: string) => Promise<CharacterSheet>>()
const getSeatState = vi.fn<(frameId: string, seatId: string) => Promise<SeatState>>()
vi.mock('@/api/frames', () => ({
  getSeatSheet: (f: string, s: string) => getSeatSheet(f, s),
  getSeatState: (f: string, s: string) => getSeatState(f, s),
  snapshotUrl: (f: string, s: string) => `/api/frames/${f}/seats/${s}/snapshot`,
  importSnapshot: vi.fn(),
  resetSeat: vi.fn(),
}))

const q = (id: string) => `[data-testid="${id}"]`

const sheet = (over: Partial<CharacterSheet> = {}): CharacterSheet => ({
  seat: 'seat-a',
  world: { name: 'Harbour', description: 'Fog and cranes.' },
  scenario: { name: 'Night shift', description: 'A ship docks late.' },
  me: {
    name: 'Alice Thompson',
    public_name: 'The Painter',
    avatar_url: '',
    universal: 'A painter of ships.',
    internal: 'ALICE-SECRET',
    external: 'Seems harmless.',
    style: '',
  },
  groups: [
    { name: 'Circle', universal: 'An art club.', external: 'Harmless.', internal: 'CIRCLE-SECRET', covert: false },
    { name: 'Ring', universal: 'Smugglers.', external: '', internal: 'RING-SECRET', covert: true },
  ],
  others: [
    {
      seat: 'seat-b',
      persona: 'p-b',
      public_name: 'The Porter',
      real_name: 'Bob Wilson',
      avatar_url: '',
      universal: 'Carries crates.',
      external: 'Strong and quiet.',
      groups: [
        { name: 'Ring', universal: 'Smugglers.', external: '', internal: 'RING-SECRET', covert: true },
        { name: 'Lodge', universal: 'A dock union.', external: 'Loud.', internal: '', covert: false },
      ],
    },
    { seat: 'seat-t', persona: 'p-t', public_name: 'The Tailor', real_name: null, avatar_url: '', universal: 'Sews.', external: '', groups: [] },
  ],
  ...over,
})

const state = (over: Partial<SeatState> = {}): SeatState => ({
  seat: 'seat-a',
  mood: { name: 'happy', intensity: 0.6, parameters: { humor: 0.62 } },
  facts: ['The door is locked.'],
  edges: [
    {
      target: 'seat-b',
      name: 'The Porter',
      affinity: 47,
      trust: 55,
      level: 'friend',
      knowledge: ['Owes the harbour money.'],
      last_outcome_seq: 3,
      last_interaction_at: '2026-11-27T02:00:00Z',
    },
  ],
  memories: [
    {
      id: 'm1',
      text: 'The Porter dropped a crate.',
      outcome: 'o1',
      source: 'witnessed',
      told_by: null,
      reliability: 1,
      significance: 3,
      pinned: true,
      created_at: '2026-11-27T02:00:00Z',
    },
  ],
  ...over,
})

describe('CharacterSheetPanel', () => {
  beforeEach(() => {
    setActivePinia(createPinia())
    localStorage.clear()
    getSeatSheet.mockReset()
    getSeatState.mockReset()
    getSeatState.mockResolvedValue(state())
  })

  it("shows the character's state: mood, facts, relationships with their level, memories (pins marked)", async () => {
    getSeatSheet.mockResolvedValue(sheet())
    const w = mount(CharacterSheetPanel, { props: { frameId: 'f1', seatId: 'seat-a' } })
    await flushPromises()
    expect(getSeatState).toHaveBeenCalledWith('f1', 'seat-a')
    expect(w.find(q('state-mood')).text()).toBe('happy (60%)')
    expect(w.find(q('state-facts')).text()).toContain('The door is locked.')
    const edge = w.find(q('state-edge'))
    expect(edge.text()).toContain('The Porter')
    expect(edge.text()).toContain('friend')
    expect(edge.text()).toContain('affinity 47, trust 55')
    const memory = w.find(q('state-memory'))
    expect(memory.attributes('data-pinned')).toBe('true')
    expect(memory.text()).toContain('The Porter dropped a crate.')
    expect(w.find(q('state-failure')).exists()).toBe(false)
    // The player exports their character's snapshot; importing and resetting are the GM's.
    expect(w.find(q('snapshot-export')).attributes('href')).toBe('/api/frames/f1/seats/seat-a/snapshot')
    expect(w.find(q('snapshot-import')).exists()).toBe(false)
    expect(w.find(q('snapshot-reset')).exists()).toBe(false)
    getSeatState.mockResolvedValue(state({ memories: [] }))
    await w.find(q('state-refresh')).trigger('click')
    await flushPromises()
    expect(w.findAll(q('state-memory'))).toHaveLength(0)
  })

  it("says so when the state cannot be read, and the sheet still shows", async () => {
    getSeatSheet.mockResolvedValue(sheet())
    getSeatState.mockRejectedValue(new Error('404'))
    const w = mount(CharacterSheetPanel, { props: { frameId: 'f1', seatId: 'seat-a' } })
    await flushPromises()
    expect(w.find(q('state-error')).exists()).toBe(true)
    expect(w.find(q('sheet-me-secret')).text()).toBe('ALICE-SECRET')
  })
  afterEach(() => localStorage.clear())

  it('opens on the first visit with the scene, the character, its secret and its groups (covert marked)', async () => {
    getSeatSheet.mockResolvedValue(sheet())
    const w = mount(CharacterSheetPanel, { props: { frameId: 'f1', seatId: 'seat-a' } })
    await flushPromises()
    expect(getSeatSheet).toHaveBeenCalledWith('f1', 'seat-a')
    expect(w.find(q('sheet-toggle')).attributes('aria-expanded')).toBe('true')
    expect(w.find(q('sheet-scene')).text()).toContain('Harbour')
    expect(w.find(q('sheet-scene')).text()).toContain('A ship docks late.')
    expect(w.find(q('sheet-me-public')).text()).toBe('The Painter')
    expect(w.find(q('sheet-me-secret')).text()).toBe('ALICE-SECRET')
    const groups = w.findAll(q('sheet-group'))
    expect(groups.map((g) => g.attributes('data-covert'))).toEqual(['false', 'true'])
    expect(groups[1]!.find(q('covert-badge')).exists()).toBe(true)
    expect(groups[0]!.find(q('covert-badge')).exists()).toBe(false)
    expect(groups[1]!.text()).toContain('RING-SECRET')
  })

  it('shows the others by their public face, a real name only when the server gives it', async () => {
    getSeatSheet.mockResolvedValue(sheet())
    const w = mount(CharacterSheetPanel, { props: { frameId: 'f1', seatId: 'seat-a' } })
    await flushPromises()
    const [bob, tony] = w.findAll(q('sheet-other')) as [DOMWrapper<Element>, DOMWrapper<Element>]
    expect(bob.text()).toContain('The Porter')
    expect(bob.find(q('sheet-other-real')).text()).toBe('(really Bob Wilson)')
    expect(bob.findAll(q('sheet-other-group')).map((g) => g.attributes('data-covert'))).toEqual(['true', 'false'])
    expect(bob.text()).toContain('Strong and quiet.')
    expect(tony.text()).toContain('The Tailor')
    expect(tony.find(q('sheet-other-real')).exists()).toBe(false)
  })

  it('starts closed once seen, and opens and closes on demand', async () => {
    getSeatSheet.mockResolvedValue(sheet())
    mount(CharacterSheetPanel, { props: { frameId: 'f1', seatId: 'seat-a' } }).unmount()
    const w = mount(CharacterSheetPanel, { props: { frameId: 'f1', seatId: 'seat-a' } })
    await flushPromises()
    expect(w.find(q('sheet-toggle')).attributes('aria-expanded')).toBe('false')
    expect(w.find(q('sheet-body')).exists()).toBe(false)
    expect(w.find(q('sheet-toggle')).text()).toContain('Alice Thompson')
    await w.find(q('sheet-toggle')).trigger('click')
    expect(w.find(q('sheet-me-secret')).text()).toBe('ALICE-SECRET')
    await w.find(q('sheet-toggle')).trigger('click')
    expect(w.find(q('sheet-body')).exists()).toBe(false)
  })

  it('another seat of the same frame is a first visit of its own', async () => {
    getSeatSheet.mockResolvedValue(sheet())
    mount(CharacterSheetPanel, { props: { frameId: 'f1', seatId: 'seat-a' } }).unmount()
    const w = mount(CharacterSheetPanel, { props: { frameId: 'f1', seatId: 'seat-b' } })
    await flushPromises()
    expect(w.find(q('sheet-toggle')).attributes('aria-expanded')).toBe('true')
  })

  it('says so when the sheet cannot be read', async () => {
    getSeatSheet.mockRejectedValue(new Error('404'))
    const w = mount(CharacterSheetPanel, { props: { frameId: 'f1', seatId: 'seat-a' } })
    await flushPromises()
    expect(w.find(q('sheet-error')).text()).toContain('Could not load')
  })

  it('reads the sheet once for the page’s life: not again when toggled or shown anew, only for a new cast', async () => {
    getSeatSheet.mockResolvedValue(sheet())
    const w = mount(CharacterSheetPanel, { props: { frameId: 'f1', seatId: 'seat-a', cast: 'k1' } })
    await flushPromises()
    await w.find(q('sheet-toggle')).trigger('click')
    await w.find(q('sheet-toggle')).trigger('click')
    w.unmount()
    const again = mount(CharacterSheetPanel, { props: { frameId: 'f1', seatId: 'seat-a', cast: 'k1' } })
    await flushPromises()
    await again.find(q('sheet-toggle')).trigger('click')
    expect(again.find(q('sheet-me-secret')).text()).toBe('ALICE-SECRET')
    expect(getSeatSheet).toHaveBeenCalledTimes(1)
    await again.setProps({ cast: 'k2' })
    await flushPromises()
    expect(getSeatSheet).toHaveBeenCalledTimes(2)
  })
})
