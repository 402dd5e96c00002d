import { describe, expect, it } from 'vitest'
import type { SnapshotImported } from '@/api/types'
import { importSummary, resetConfirmed, restoreList, snapshotCharacter, snapshotProblem } from './snapshots'

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
})
