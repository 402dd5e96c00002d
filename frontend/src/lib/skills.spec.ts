import { describe, expect, it } from 'vitest'
import type { Skill } from '@/api/types'
import { guardedCategories, skillRows } from './skills'

let n = 0
function skill(scope: Skill['scope'], category: string, more: Partial<Skill> = {}): Skill {
  n += 1
  return {
    id: `s${n}`,
    scope,
    face: 'player',
    category,
    name: `${scope} ${category}`,
    text: '…',
    guard: false,
    frame: scope === 'frame' ? 'f1' : null,
    editable: scope !== 'platform',
    updated_at: '2026-11-27T00:00:00Z',
    ...more,
  }
}

describe('skillRows', () => {
  it('lets the most specific skill apply and names the platform one it replaces', () => {
    const platform = skill('platform', 'orientation')
    const mine = skill('user', 'orientation')
    const rows = skillRows([mine, platform, skill('frame', 'orientation')], 'player')
    expect(rows).toHaveLength(1)
    expect(rows[0]?.applies).toBe(mine)
    expect(rows[0]?.replaces).toBe(platform)
  })

  it('keeps a guard category the platform’s and lists guards last', () => {
    const guard = skill('platform', 'agency', { guard: true })
    const sneaky = skill('user', 'agency')
    const tone = skill('user', 'tone')
    const rows = skillRows([sneaky, guard, tone], 'player')
    expect(rows.map((r) => [r.category, r.applies.id, r.guard])).toEqual([
      ['tone', tone.id, false],
      ['agency', guard.id, true],
    ])
    expect(rows[0]?.replaces).toBeNull()
    expect(guardedCategories([sneaky, guard, tone], 'player')).toEqual(new Set(['agency']))
  })

  it('shows one face at a time', () => {
    const author = skill('platform', 'content-structure', { face: 'author' })
    expect(skillRows([author, skill('user', 'tone')], 'author').map((r) => r.applies)).toEqual([author])
  })
})
