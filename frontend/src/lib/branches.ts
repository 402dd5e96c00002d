/**
 * Conversation tree helpers: turns link to their parent, so regenerating makes siblings.
 * The visible transcript is the path from a root to a selected leaf, continued below that
 * leaf along its most recent descendants (so new turns under it appear on their own).
 */

export interface TreeTurn {
  id: string
  parent: string | null
  created_at: string
}

export interface PathEntry<T extends TreeTurn> {
  turn: T
  /** 1-based position among the turn's siblings (same parent), oldest first. */
  siblingIndex: number
  siblingCount: number
  siblings: T[]
}

/** Children of each turn (key null = roots), oldest first; ties keep input order. */
export function childrenMap<T extends TreeTurn>(turns: readonly T[]): Map<string | null, T[]> {
  const map = new Map<string | null, T[]>()
  const ids = new Set(turns.map((t) => t.id))
  turns.forEach((t) => {
    // A turn whose parent is unknown is shown as a root rather than lost.
    const key = t.parent !== null && ids.has(t.parent) ? t.parent : null
    const list = map.get(key)
    if (list) list.push(t)
    else map.set(key, [t])
  })
  for (const list of map.values()) list.sort(compareCreated)
  return map
}

function compareCreated(a: TreeTurn, b: TreeTurn): number {
  return a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0
}

/**
 * The most recently created turn in the subtree under `id` (id included; null = whole tree).
 * Returns null only for an empty tree.
 */
export function latestLeaf<T extends TreeTurn>(children: Map<string | null, T[]>, id: string | null, self?: T): T | null {
  let best: T | null = self ?? null
  const stack: (string | null)[] = [id]
  while (stack.length) {
    const current = stack.pop() as string | null
    for (const child of children.get(current) ?? []) {
      if (!best || compareCreated(child, best) >= 0) best = child
      stack.push(child.id)
    }
  }
  return best
}

/**
 * The visible transcript: root → `leafId`, then below it the chain to its most recent
 * descendant. Without a (known) leaf, the chain to the most recent turn of the whole tree.
 */
export function visiblePath<T extends TreeTurn>(
  turns: readonly T[],
  leafId: string | null,
  exact = false,
): PathEntry<T>[] {
  if (!turns.length) return []
  const children = childrenMap(turns)
  const byId = new Map(turns.map((t) => [t.id, t]))
  const parentKey = (t: T): string | null => (t.parent !== null && byId.has(t.parent) ? t.parent : null)

  let leaf = leafId ? byId.get(leafId) ?? null : null
  // `exact`: the branch ends at `leafId` (a rewound head), its later turns hidden.
  if (!(exact && leaf)) leaf = leaf ? latestLeaf(children, leaf.id, leaf) : latestLeaf(children, null)
  const chain: T[] = []
  for (let t: T | undefined = leaf ?? undefined; t; ) {
    chain.push(t)
    const p = parentKey(t)
    t = p === null ? undefined : byId.get(p)
  }
  chain.reverse()
  return chain.map((turn) => {
    const siblings = children.get(parentKey(turn)) ?? [turn]
    return { turn, siblings, siblingIndex: siblings.indexOf(turn) + 1, siblingCount: siblings.length }
  })
}

/**
 * The leaf to select when switching from `turn` to its sibling `delta` steps away
 * (the sibling's most recent descendant). Returns null when there is no such sibling.
 */
export function siblingLeaf<T extends TreeTurn>(turns: readonly T[], turnId: string, delta: number): string | null {
  const children = childrenMap(turns)
  const turn = turns.find((t) => t.id === turnId)
  if (!turn) return null
  const ids = new Set(turns.map((t) => t.id))
  const siblings = children.get(turn.parent !== null && ids.has(turn.parent) ? turn.parent : null) ?? []
  const target = siblings[siblings.indexOf(turn) + delta]
  if (!target) return null
  return latestLeaf(children, target.id, target)?.id ?? target.id
}

/** The turns below `id` (its replies, theirs, and so on). */
export function descendants<T extends TreeTurn>(children: Map<string | null, T[]>, id: string): T[] {
  const found: T[] = []
  const stack = [id]
  while (stack.length) {
    for (const child of children.get(stack.pop() as string) ?? []) {
      found.push(child)
      stack.push(child.id)
    }
  }
  return found
}

/** How many turns lie below `id`. */
export const countBelow = <T extends TreeTurn>(children: Map<string | null, T[]>, id: string): number =>
  descendants(children, id).length

/** The other versions of a path entry that the conversation goes on from: where turns
 *  hidden by choosing this version are (1-based version, turns below it). */
export function otherBranches<T extends TreeTurn>(
  children: Map<string | null, T[]>,
  entry: PathEntry<T>,
): { version: number; later: number }[] {
  return entry.siblings
    .map((sibling, i) => ({ version: i + 1, later: sibling === entry.turn ? 0 : countBelow(children, sibling.id) }))
    .filter((b) => b.later > 0)
}
