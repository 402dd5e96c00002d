import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ApiError } from '@/api/http'
import type { SeatResetDone, SnapshotImported, SnapshotRecord } from '@/api/types'
import SnapshotActions from './SnapshotActions.vue'

const importSnapshot = vi.fn<(f: string, s: string, file: File, restore: string[]) => Promise<SnapshotImported>>()
const resetSeat = vi.fn<(f: string, s: string, confirm: string) => Promise<SeatResetDone>>()
const listSnapshots = vi.fn<(f: string) => Promise<{ snapshots: SnapshotRecord[] }>>()
const restoreSnapshot = vi.fn<(f: string, s: string, id: string, restore: string[]) => Promise<SnapshotImported>>()
vi.mock('@/api/frames', () => ({
  listSnapshots: (f: string) => listSnapshots(f),
  restoreSnapshot: (f: string, s: string, id: string, restore: string[]) => restoreSnapshot(f, s, id, restore),
  storedSnapshotUrl: (f: string, id: string) => `/api/frames/${f}/snapshots/${id}`,
  snapshotUrl: (f: string, s: string) => `/api/frames/${f}/seats/${s}/snapshot`,
  importSnapshot: (f: string, s: string, file: File, restore: string[]) => importSnapshot(f, s, file, restore),
  resetSeat: (f: string, s: string, confirm: string) => resetSeat(f, s, confirm),
}))

const q = (id: string) => `[data-testid="${id}"]`
const inDialog = (id: string) => document.querySelector<HTMLElement>(q(id))

function mountGm() {
  return mount(SnapshotActions, { props: { frameId: 'f1', seatId: 's1', gm: true, name: 'Alice Thompson' }, attachTo: document.body })
}

async function choose(text: string) {
  const input = inDialog('snapshot-file') as HTMLInputElement
  const file = new File([text], 'alice.snapshot.json', { type: 'application/json' })
  Object.defineProperty(input, 'files', { value: [file], configurable: true })
  input.dispatchEvent(new Event('change'))
  await flushPromises()
  await new Promise((r) => setTimeout(r, 0))
  await flushPromises()
  return file
}

const imported = (over: Partial<SnapshotImported> = {}): SnapshotImported => ({
  snapshot: 'x',
  seat: 's1',
  restored: ['affinity', 'mood', 'facts', 'memories'],
  memories: 2,
  unknown_characters: [],
  persona: null,
  warnings: [],
  ...over,
})

beforeEach(() => {
  listSnapshots.mockResolvedValue({ snapshots: [] })
})

afterEach(() => {
  vi.clearAllMocks()
  document.body.innerHTML = ''
})

describe('SnapshotActions', () => {
  it('gives a player the export link only', () => {
    const w = mount(SnapshotActions, { props: { frameId: 'f1', seatId: 's1' } })
    expect(w.find(q('snapshot-export')).attributes('href')).toBe('/api/frames/f1/seats/s1/snapshot')
    expect(w.find(q('snapshot-import')).exists()).toBe(false)
    expect(w.find(q('snapshot-reset')).exists()).toBe(false)
  })

  it('resets only once the name is typed back, and says the server’s refusal', async () => {
    const w = mountGm()
    await w.find(q('snapshot-reset')).trigger('click')
    const ok = () => inDialog('snapshot-reset-ok') as HTMLButtonElement
    const confirm = inDialog('snapshot-confirm') as HTMLInputElement
    expect(ok().disabled).toBe(true)
    confirm.value = 'alice'
    confirm.dispatchEvent(new Event('input'))
    await flushPromises()
    expect(ok().disabled).toBe(true)
    confirm.value = 'Alice Thompson'
    confirm.dispatchEvent(new Event('input'))
    await flushPromises()
    resetSeat.mockRejectedValueOnce(new ApiError(403, 'Only the frame’s GM can do that.'))
    ok().click()
    await flushPromises()
    expect(inDialog('snapshot-error')?.textContent).toContain('Only the frame’s GM')
    resetSeat.mockResolvedValueOnce({ snapshot: 'snap', seat: 's1', memories_cleared: 2 })
    ok().click()
    await flushPromises()
    expect(resetSeat).toHaveBeenLastCalledWith('f1', 's1', 'Alice Thompson')
    expect(inDialog('snapshot-done')?.textContent).toContain('2 memories cleared')
    expect(w.emitted('changed')).toHaveLength(1)
    w.unmount()
  })

  it('imports a snapshot file with the chosen parts, and refuses a file that is not one', async () => {
    const w = mountGm()
    await w.find(q('snapshot-import')).trigger('click')
    await choose('{"spec": "chara_card_v2"}')
    expect(inDialog('snapshot-error')?.textContent).toContain('not an LMiX character snapshot')
    expect((inDialog('snapshot-import-ok') as HTMLButtonElement).disabled).toBe(true)
    const file = await choose(JSON.stringify({ _snapshot_info: { format: 'lmix-snapshot', version: 1, character: 'Alice' } }))
    expect(inDialog('snapshot-error')).toBeNull()
    ;(inDialog('snapshot-restore-memories') as HTMLInputElement).click()
    await flushPromises()
    importSnapshot.mockResolvedValueOnce({
      snapshot: 'x',
      seat: 's1',
      restored: ['affinity', 'mood', 'facts'],
      memories: 0,
      unknown_characters: ['Nobody'],
      persona: null,
      warnings: [],
    })
    ;(inDialog('snapshot-import-ok') as HTMLButtonElement).click()
    await flushPromises()
    expect(importSnapshot).toHaveBeenCalledWith('f1', 's1', file, ['affinity', 'mood', 'facts'])
    expect(inDialog('snapshot-done')?.textContent).toContain('No one here is called Nobody')
    w.unmount()
  })

  it('restores a snapshot the frame keeps of this seat, such as the one a reset took', async () => {
    const record = (id: string, kind: SnapshotRecord['kind'], seat: string | null): SnapshotRecord => ({
      id,
      kind,
      seat,
      character: 'Alice Thompson',
      by: 'gm',
      outcome_seq: null,
      created_at: '2026-11-27T12:00:00Z',
    })
    listSnapshots.mockResolvedValue({ snapshots: [record('r1', 'reset', 's1'), record('o1', 'export', 's2')] })
    restoreSnapshot.mockResolvedValue(imported())
    const w = mountGm()
    await w.find(q('snapshot-import')).trigger('click')
    await flushPromises()
    const rows = document.querySelectorAll(q('snapshot-kept-row'))
    expect([...rows].map((r) => r.getAttribute('data-kind'))).toEqual(['reset'])
    expect(rows[0]!.querySelector('a')?.getAttribute('href')).toBe('/api/frames/f1/snapshots/r1')
    ;(rows[0]!.querySelector(q('snapshot-kept-restore')) as HTMLButtonElement).click()
    await flushPromises()
    expect(restoreSnapshot).toHaveBeenCalledWith('f1', 's1', 'r1', ['affinity', 'mood', 'facts', 'memories'])
    expect(inDialog('snapshot-done')?.textContent).toContain('2 memories added.')
    expect(w.emitted('changed')).toHaveLength(1)
    w.unmount()
  })
})
