import { flushPromises, mount } from '@vue/test-utils'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { ApiError } from '@/api/http'
import * as api from '@/api/rewind'
import { makeOutcome, SEATS } from '@/test/factories'
import RewindDialog from './RewindDialog.vue'
import RewindList from './RewindList.vue'

vi.mock('@/api/rewind', async (real) => ({
  ...(await real<typeof import('@/api/rewind')>()),
  previewRewind: vi.fn(),
  rewindFrame: vi.fn(),
  previewRegenerate: vi.fn(),
  regenerateWith: vi.fn(),
  listRewinds: vi.fn(),
  restoreRewind: vi.fn(),
}))

const q = (id: string) => `[data-testid="${id}"]`
const nameOf = (seat: string) => ({ [SEATS.alice]: 'Alice', [SEATS.bob]: 'Bob' })[seat] ?? 'Someone'
const outcome = makeOutcome({ id: 'o2', seq: 7 })
const counts = { outcomes: 2, narratives: 2, liquid: 1, memories: 0, state_deltas: 3, passes: 2, state_passes: 0 }
const preview = {
  to_seq: 7,
  counts,
  outcomes: [{ id: 'o3', seq: 9, text: 'Bob slams the door.', held: false }],
  narratives: [{ id: 'n3', seat: 'Bob Wilson', text: 'The door shakes.' }],
  liquid: [{ id: 'l3', seat: 'Bob Wilson', text: 'I slam the door.' }],
  memories: [],
  state_deltas: [],
}
const dialog = (mode: 'rewind' | 'regenerate') =>
  mount(RewindDialog, { props: { open: true, mode, frameId: 'f1', outcome, number: 2, nameOf }, attachTo: document.body })
const inBody = (id: string) => document.body.querySelectorAll<HTMLElement>(q(id))

beforeEach(() => {
  vi.clearAllMocks()
  document.body.innerHTML = ''
})

describe('the rewind dialog', () => {
  it('shows the dry run’s list before anything is rewound, then rewinds on confirm', async () => {
    vi.mocked(api.previewRewind).mockResolvedValue(preview)
    vi.mocked(api.rewindFrame).mockResolvedValue({} as never)
    const w = dialog('rewind')
    await flushPromises()
    expect(api.previewRewind).toHaveBeenCalledWith('f1', 'o2')
    expect(api.rewindFrame).not.toHaveBeenCalled()
    expect(inBody('rewind-counts')[0]!.textContent).toBe('2 outcomes, 2 narratives, 1 intention, 3 state changes')
    expect(inBody('rewind-outcome')[0]!.textContent).toContain('Bob slams the door.')
    expect(inBody('rewind-narrative')[0]!.textContent).toContain('The door shakes.')
    inBody('rewind-confirm')[0]!.click()
    await flushPromises()
    expect(api.rewindFrame).toHaveBeenCalledWith('f1', 'o2')
    expect(w.emitted('done')).toHaveLength(1)
  })

  it('says why the server refused, and stays open', async () => {
    vi.mocked(api.previewRewind).mockResolvedValue(preview)
    vi.mocked(api.rewindFrame).mockRejectedValue(new ApiError(409, 'The scene is closed: a closed frame is not rewound.'))
    const w = dialog('rewind')
    await flushPromises()
    inBody('rewind-confirm')[0]!.click()
    await flushPromises()
    expect(inBody('rewind-error')[0]!.textContent).toContain('closed')
    expect(w.emitted('done')).toBeUndefined()
  })

  it('regenerates with only the intentions the GM rewrote', async () => {
    const inputs = [
      { liquid: 'l2', seat: SEATS.bob, content: 'I knock.' },
      { liquid: 'l9', seat: SEATS.alice, content: 'I wait.' },
    ]
    vi.mocked(api.previewRegenerate).mockResolvedValue({ ...preview, inputs })
    vi.mocked(api.regenerateWith).mockResolvedValue({ passes: [], rewind: 4 })
    const w = dialog('regenerate')
    await flushPromises()
    const fields = inBody('regenerate-input') as NodeListOf<HTMLTextAreaElement>
    expect([...fields].map((f) => f.value)).toEqual(['I knock.', 'I wait.'])
    expect(document.body.textContent).toContain('Bob’s intention')
    fields[0]!.value = 'I kick the door in.'
    fields[0]!.dispatchEvent(new Event('input'))
    await flushPromises()
    expect(inBody('rewind-confirm')[0]!.textContent).toContain('with my changes')
    inBody('rewind-confirm')[0]!.click()
    await flushPromises()
    expect(api.regenerateWith).toHaveBeenCalledWith('o2', [{ liquid: 'l2', content: 'I kick the door in.' }])
    expect(w.emitted('done')).toHaveLength(1)
  })
})

describe('the rewinds list', () => {
  const rewind = (id: number, restored: boolean, restorable: boolean) => ({
    id,
    kind: 'rewind' as const,
    to_seq: 7,
    to_outcome: 'o2',
    by: 'gm',
    created_at: '2026-01-01T00:00:00Z',
    counts,
    edits: [],
    restored_at: restored ? '2026-01-01T00:01:00Z' : null,
    restored_by: restored ? 'gm' : null,
    restorable,
  })

  it('shows each standing rewind, restores the newest, and re-reads', async () => {
    vi.mocked(api.listRewinds).mockResolvedValue({ rewinds: [rewind(2, false, true), rewind(1, true, false)] })
    vi.mocked(api.restoreRewind).mockResolvedValue(rewind(2, true, false))
    const w = mount(RewindList, { props: { frameId: 'f1', refresh: 0, numberOf: () => 2 } })
    await flushPromises()
    expect(w.findAll(q('rewind-item'))).toHaveLength(1)
    expect(w.find(q('rewind-item')).text()).toContain('Rewound after #2')
    expect(w.find(q('rewinds-restored')).text()).toBe('1 restored')
    await w.find(q('rewind-restore')).trigger('click')
    await flushPromises()
    expect(api.restoreRewind).toHaveBeenCalledWith('f1', 2)
    expect(w.emitted('restored')).toHaveLength(1)
    expect(api.listRewinds).toHaveBeenCalledTimes(2)
  })
})

describe('countsLine', () => {
  it('says which later scenes go and which scene reopens', () => {
    expect(api.countsLine({ outcomes: 1, scenes: 1, scenes_reopened: 1 })).toBe('1 outcome, 1 later scene, 1 scene reopened')
    expect(api.countsLine({ outcomes: 1, scenes: 0, scenes_reopened: 0 })).toBe('1 outcome')
  })
})
