import { describe, expect, it } from 'vitest'
import { childrenMap, latestLeaf, siblingLeaf, visiblePath, type TreeTurn } from './branches'

let clock = 0
function t(id: string, parent: string | null): TreeTurn {
  clock += 1
  return { id, parent, created_at: new Date(Date.UTC(2025, 0, 1, 0, 0, clock)).toISOString() }
}

/*
 * a ─ b ─ c ─ d
 *      └ b2 ─ e        (b2 regenerated after d was written; e is the newest turn)
 *      └ b3            (a failed sibling? no: created before e)
 */
function tree() {
  clock = 0
  const a = t('a', null)
  const b = t('b', 'a')
  const c = t('c', 'b')
  const d = t('d', 'c')
  const b2 = t('b2', 'a')
  const b3 = t('b3', 'a')
  const e = t('e', 'b2')
  return [a, b, c, d, b2, b3, e]
}

const ids = (path: { turn: TreeTurn }[]) => path.map((p) => p.turn.id)

describe('visiblePath', () => {
  it('is empty without turns', () => {
    expect(visiblePath([], null)).toEqual([])
  })

  it('follows the most recent turn when no leaf is selected', () => {
    expect(ids(visiblePath(tree(), null))).toEqual(['a', 'b2', 'e'])
  })

  it('shows root → selected leaf with sibling positions', () => {
    const path = visiblePath(tree(), 'd')
    expect(ids(path)).toEqual(['a', 'b', 'c', 'd'])
    expect(path.map((p) => [p.siblingIndex, p.siblingCount])).toEqual([
      [1, 1],
      [1, 3],
      [1, 1],
      [1, 1],
    ])
  })

  it('continues below a selected inner turn along its latest descendants', () => {
    expect(ids(visiblePath(tree(), 'b'))).toEqual(['a', 'b', 'c', 'd'])
    expect(ids(visiblePath(tree(), 'b2'))).toEqual(['a', 'b2', 'e'])
  })

  it('extends the branch on its own when a child is added under the leaf', () => {
    const turns = tree()
    clock = 100
    turns.push(t('f', 'd'))
    expect(ids(visiblePath(turns, 'd'))).toEqual(['a', 'b', 'c', 'd', 'f'])
  })

  it('falls back to the latest branch for an unknown leaf', () => {
    expect(ids(visiblePath(tree(), 'nope'))).toEqual(['a', 'b2', 'e'])
  })

  it('treats several roots as siblings', () => {
    clock = 0
    const turns = [t('r1', null), t('r2', null)]
    const path = visiblePath(turns, 'r1')
    expect(ids(path)).toEqual(['r1'])
    expect([path[0]?.siblingIndex, path[0]?.siblingCount]).toEqual([1, 2])
  })

  it('shows a turn with a missing parent as a root instead of dropping it', () => {
    clock = 0
    const turns = [t('x', 'ghost')]
    expect(ids(visiblePath(turns, null))).toEqual(['x'])
  })
})

describe('siblingLeaf', () => {
  it('moves to the next sibling and selects its most recent descendant', () => {
    expect(siblingLeaf(tree(), 'b', 1)).toBe('e')
    expect(siblingLeaf(tree(), 'b2', 1)).toBe('b3')
    expect(siblingLeaf(tree(), 'b2', -1)).toBe('d')
  })

  it('returns null past either end', () => {
    expect(siblingLeaf(tree(), 'b', -1)).toBeNull()
    expect(siblingLeaf(tree(), 'b3', 1)).toBeNull()
    expect(siblingLeaf(tree(), 'missing', 1)).toBeNull()
  })
})

describe('childrenMap / latestLeaf', () => {
  it('orders children oldest first', () => {
    const children = childrenMap(tree())
    expect(children.get('a')?.map((x) => x.id)).toEqual(['b', 'b2', 'b3'])
    expect(latestLeaf(children, 'b')?.id).toBe('d')
    expect(latestLeaf(children, null)?.id).toBe('e')
  })
})
