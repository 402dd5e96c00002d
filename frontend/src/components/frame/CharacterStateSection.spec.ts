import { flushPromises, mount } from '@vue/test-utils'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import type { MemoryEditInput, SeatState, StateEditInput } from '@/api/types'
import { ApiError } from '@/api/http'
import CharacterStateSection from './CharacterStateSection.vue'

const getSeatState = vi.fn<(frameId: string, seatId: string) => Promise<SeatState>>()
const editSeatState = vi.fn<(frameId: string, seatId: string, input: StateEditInput) => Promise<SeatState>>()
const editSeatMemory = vi.fn<(frameId: string, seatId: string, id: string, input: MemoryEditInput) => Promise<SeatState>>()
vi.mock('@/api/frames', async (importOriginal) => ({
  ...(await importOriginal<typeof import('@/api/frames')>()), // the snapshot actions' calls
  getSeatState: (f: string, s: string) => getSeatState(f, s),
  editSeatState: (f: string, s: string, i: StateEditInput) => editSeatState(f, s, i),
  editSeatMemory: (f: string, s: string, m: string, i: MemoryEditInput) => editSeatMemory(f, s, m, i),
}))

const q = (id: string) => `[data-testid="${id}"]`

const state = (over: Partial<SeatState> = {}): SeatState => ({
  seat: 'seat-a',
  mood: { name: 'happy', intensity: 0.6, parameters: {} },
  facts: [],
  edges: [
    { target: 'seat-b', name: 'The Porter', affinity: 47, trust: 55, level: 'friend', knowledge: [], last_outcome_seq: 3, last_interaction_at: null },
  ],
  memories: [
    { id: 'm1', text: 'The crate fell.', outcome: 'o1', source: 'witnessed', told_by: null, reliability: 1, significance: 1, pinned: false, created_at: '' },
    { id: 'm2', text: 'Bob told me: the key.', outcome: 'o0', source: 'told', told_by: 'The Porter', reliability: 0.7, significance: 1, pinned: false, created_at: '' },
  ],
  ...over,
})

describe('CharacterStateSection', () => {
  beforeEach(() => {
    getSeatState.mockReset()
    editSeatState.mockReset()
    editSeatMemory.mockReset()
    getSeatState.mockResolvedValue(state())
  })

  it('is read-only for the player: no edit controls; told memories are marked', async () => {
    const w = mount(CharacterStateSection, { props: { frameId: 'f1', seatId: 'seat-a' } })
    await flushPromises()
    expect(w.text()).toContain('Your state')
    for (const id of ['state-mood-select', 'state-mood-save', 'state-fact-input', 'state-edge-save', 'state-memory-pin', 'state-memory-remove']) {
      expect(w.find(q(id)).exists()).toBe(false)
    }
    expect(w.findAll(q('state-memory'))[1]!.text()).toContain('told')
  })

  it('reads again when its version moves (a state.changed was heard)', async () => {
    const w = mount(CharacterStateSection, { props: { frameId: 'f1', seatId: 'seat-a', version: undefined } })
    await flushPromises()
    expect(getSeatState).toHaveBeenCalledTimes(1)
    getSeatState.mockResolvedValue(state({ mood: { name: 'angry', intensity: 0.9, parameters: {} } }))
    await w.setProps({ version: 1 })
    await flushPromises()
    expect(getSeatState).toHaveBeenCalledTimes(2)
    expect(w.find(q('state-mood')).text()).toBe('angry (90%)')
  })

  it('lets the GM set the mood, an edge and a fact, and pin or remove a memory', async () => {
    editSeatState.mockResolvedValue(state({ mood: { name: 'sad', intensity: 0.3, parameters: {} } }))
    editSeatMemory.mockResolvedValue(state({ memories: [] }))
    const w = mount(CharacterStateSection, { props: { frameId: 'f1', seatId: 'seat-a', editable: true } })
    await flushPromises()
    await w.find(q('state-mood-select')).setValue('sad')
    await w.find(q('state-intensity')).setValue('30')
    await w.find(q('state-mood-save')).trigger('click')
    await flushPromises()
    expect(editSeatState).toHaveBeenLastCalledWith('f1', 'seat-a', { mood: 'sad', intensity: 0.3 })
    expect(w.find(q('state-mood')).text()).toBe('sad (30%)')

    await w.find(q('state-edge-affinity')).setValue('90')
    await w.find(q('state-edge-save')).trigger('submit')
    expect(editSeatState).toHaveBeenLastCalledWith('f1', 'seat-a', { edges: [{ target: 'seat-b', affinity: 90, trust: 55 }] })

    await w.find(q('state-fact-input')).setValue('The cellar is flooded.')
    await w.find(q('state-fact-save')).trigger('submit')
    expect(editSeatState).toHaveBeenLastCalledWith('f1', 'seat-a', { fact: 'The cellar is flooded.' })
    await flushPromises()

    await w.findAll(q('state-memory-pin'))[0]!.trigger('click')
    expect(editSeatMemory).toHaveBeenLastCalledWith('f1', 'seat-a', 'm1', { pinned: true })
    await flushPromises()
  })

  it('lets the GM set an edge toward a character it has none toward yet', async () => {
    editSeatState.mockResolvedValue(state())
    const others = [
      { id: 'seat-a', name: 'The Painter' },
      { id: 'seat-b', name: 'The Porter' },
      { id: 'seat-t', name: 'The Tailor' },
    ]
    const w = mount(CharacterStateSection, { props: { frameId: 'f1', seatId: 'seat-a', editable: true, others } })
    await flushPromises()
    const form = w.find(q('state-new-edge'))
    expect(form.findAll('option').map((o) => o.text())).toEqual(['Toward…', 'The Tailor'])
    await form.find('select').setValue('seat-t')
    await form.trigger('submit')
    expect(editSeatState).toHaveBeenLastCalledWith('f1', 'seat-a', { edges: [{ target: 'seat-t', affinity: 10, trust: 50 }] })
    await flushPromises()
  })

  it("shows the server's reason when an edit is refused", async () => {
    editSeatState.mockRejectedValue(new ApiError(400, 'Use one of these moods: neutral.'))
    const w = mount(CharacterStateSection, { props: { frameId: 'f1', seatId: 'seat-a', editable: true } })
    await flushPromises()
    await w.find(q('state-mood-save')).trigger('click')
    await flushPromises()
    expect(w.find(q('state-edit-error')).text()).toBe('Use one of these moods: neutral.')
  })
})
