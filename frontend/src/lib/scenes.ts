/**
 * Scenes in the feed: a divider where each scene after the first opens ("Scene 2 — The
 * docks"), before the first outcome numbered after the scene's `opened_seq`, or at the end
 * while nothing has happened in it yet; and one at the very end once the last scene closed
 * (the frame ended).
 */
import type { SceneItem } from '@/api/types'
import type { FeedEntry } from './frame'

/** `scene`: the one it opens (null: the frame's end, after its last scene); `previous`: the one it ends. */
export type SceneDivider = { kind: 'scene'; key: string; scene: SceneItem | null; previous: SceneItem | null }
export type FeedRow = FeedEntry | SceneDivider

/** "Scene 2 — The docks", or "Scene 2". */
export function sceneTitle(scene: Pick<SceneItem, 'number' | 'title'>): string {
  return scene.title ? `Scene ${scene.number} — ${scene.title}` : `Scene ${scene.number}`
}

/** Why a scene ended, as readers say it. */
export function closedBecause(scene: Pick<SceneItem, 'closed_reason'>): string {
  return { gm: 'closed by the GM', location: 'the place changed', pause: 'after a long pause', '': '' }[scene.closed_reason]
}

/** `feed` with a divider before each scene after the first (`previous`: the scene it ends). */
export function withScenes(feed: readonly FeedEntry[], scenes: readonly SceneItem[]): FeedRow[] {
  const ordered = [...scenes].sort((a, b) => a.number - b.number)
  const dividers: SceneDivider[] = ordered.flatMap((scene, i) =>
    scene.number > 1 ? [{ kind: 'scene' as const, key: `s:${scene.id}`, scene, previous: ordered[i - 1] ?? null }] : [],
  )
  const rows: FeedRow[] = []
  for (const entry of feed) {
    while (dividers.length && entry.kind === 'outcome' && entry.outcome.seq > (dividers[0]!.scene?.opened_seq ?? 0)) {
      rows.push(dividers.shift()!)
    }
    rows.push(entry)
  }
  // A frame closed for good closed its last scene too: its summaries close the feed.
  const last = ordered[ordered.length - 1]
  if (last?.status === 'closed') dividers.push({ kind: 'scene', key: 's:end', scene: null, previous: last })
  return [...rows, ...dividers]
}
