import { flushPromises, mount } from '@vue/test-utils'
import { describe, expect, it, vi } from 'vitest'
import * as api from '@/api/productions'
import type { ProductionState } from '@/api/types'
import CastStatePanel from './CastStatePanel.vue'

vi.mock('@/api/productions', () => ({ getProductionState: vi.fn() }))

const q = (id: string) => `[data-testid="${id}"]`
const mood = { name: 'neutral', intensity: 0.5, parameters: {} }

describe('CastStatePanel', () => {
  it('shows each member’s mood, relationships, facts and memories, and reads again on a new version', async () => {
    const state: ProductionState = {
      last_failure: null,
      members: [
        {
          assistant: 'a1',
          name: 'Alice',
          mood: { name: 'happy', intensity: 0.7, parameters: {} },
          facts: ['the door is locked'],
          edges: [{ target: 'a2', name: 'Bob', affinity: 45, trust: 52, level: 'friend', knowledge: [] }],
          memories: [{ id: 'm1', text: 'ALICE-MEMORY', turn: 't1', significance: 3, pinned: true }],
        },
        { assistant: 'a2', name: 'Bob', mood, facts: [], edges: [], memories: [] },
      ],
    }
    vi.mocked(api.getProductionState).mockResolvedValue(state)
    const w = mount(CastStatePanel, { props: { productionId: 'p1', version: 'a' } })
    await flushPromises()
    const members = w.findAll(q('cast-state-member'))
    expect(members).toHaveLength(2)
    expect(members[0]!.text()).toContain('happy 0.7')
    expect(members[0]!.text()).toContain('→ Bob: friend')
    expect(members[0]!.text()).toContain('the door is locked')
    expect(members[0]!.text()).toContain('ALICE-MEMORY')
    expect(w.find('button').exists()).toBe(true) // read-only: only Refresh
    expect(w.findAll('input, textarea')).toHaveLength(0)

    await w.setProps({ version: 'b' })
    await flushPromises()
    expect(api.getProductionState).toHaveBeenCalledTimes(2)
  })

  it('says so while nothing has happened to the cast', async () => {
    vi.mocked(api.getProductionState).mockResolvedValue({
      last_failure: null,
      members: [{ assistant: 'a1', name: 'Alice', mood, facts: [], edges: [], memories: [] }],
    })
    const w = mount(CastStatePanel, { props: { productionId: 'p1', version: 'a' } })
    await flushPromises()
    expect(w.find(q('cast-state-empty')).exists()).toBe(true)
  })
})
