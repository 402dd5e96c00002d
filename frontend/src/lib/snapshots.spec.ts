import { describe, expect, it } from 'vitest'
import type { SnapshotImported, SnapshotRecord } from '@/api/types'
import { importSummary, recordLabel, resetConfirmed, restorableFor, restoreList, snapshotCharacter, snapshotProblem } from './snapshots'

const snapshot = (info: Record<string, unknown>) => JSON.stringify({ _snapshot_info: info })

describe('snapshots', () => {
  it('lists the chosen restore options in the server order', () => {
    expect(restoreList({ memories: true, affinity: true, mood: false, facts: false })).toEqual(['affinity', 'memories'])
    expect(restoreList({ memories: false, affinity: false, mood: false, facts: false })).toEqual([])
  })

  it('takes a first look at a file', () => {
    expect(snapshotProblem(snapshot({ format: 'lmix-snapshot', version: 1, character: 'Ann' }))).toBeNull()
    expect(snapshotProblem('{oops')).toBe('This file is not JSON.')
    expect(snapshotProblem('[1]')).toBe('This file is not a snapshot.')
    expect(snapshotProblem(JSON.stringify({ spec: 'chara_card_v2' }))).toMatch(/not an LMiX/)
    expect(snapshotProblem(snapshot({ format: 'lmix-snapshot', version: 2 }))).toMatch(/version 2/)
    expect(snapshotCharacter(snapshot({ character: 'Ann' }))).toBe('Ann')
    expect(snapshotCharacter('nope')).toBeNull()
  })

  it('confirms a reset only with the name typed back', () => {
    expect(resetConfirmed(' Alice Thompson ', 'Alice Thompson')).toBe(true)
    expect(resetConfirmed('alice thompson', 'Alice Thompson')).toBe(false)
    expect(resetConfirmed('', '')).toBe(false)
  })

  it('says what an import did', () => {
    const answer: SnapshotImported = {
      snapshot: 's',
      seat: 'x',
      restored: ['affinity', 'memories'],
      memories: 1,
      unknown_characters: ['Nobody'],
      persona: null,
      warnings: ['The snapshot is of Ann; this seat plays Bea.'],
    }
    expect(importSummary(answer)).toEqual([
      'Restored: affinity, memories.',
      '1 memory added.',
      'No one here is called Nobody: skipped.',
      'The snapshot is of Ann; this seat plays Bea.',
    ])
  })

  it('offers the kept snapshots of one seat and the frame’s, newest first', () => {
    const record = (id: string, kind: SnapshotRecord['kind'], seat: string | null): SnapshotRecord => ({
      id,
      kind,
      seat,
      character: null,
      by: kind === 'frame' ? null : 'gm',
      outcome_seq: null,
      created_at: '2026-11-27T12:00:00Z',
    })
    const records = [
      record('1', 'reset', 'a'),
      record('2', 'export', 'b'),
      record('3', 'frame', null),
      record('4', 'import', 'a'),
      record('5', 'rewind', null),
    ]
    expect(restorableFor(records, 'a').map((r) => r.id)).toEqual(['1', '3', '4', '5'])
    expect(restorableFor(records, 'a', 1).map((r) => r.id)).toEqual(['1'])
    expect(recordLabel(records[0]!, 'en-GB')).toMatch(/^Before a reset by gm, 27\/11\/2026/)
    expect(recordLabel(records[2]!, 'en-GB')).toMatch(/^Periodic \(whole frame\), /)
    expect(recordLabel(records[4]!, 'en-GB')).toMatch(/^Before a rewind \(whole frame\) by gm, /)
  })
})
