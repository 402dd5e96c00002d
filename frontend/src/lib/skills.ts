/** How skills combine for one face, as the server's `skills_for` combines them: per category the most specific wins; a guard category keeps the platform's. */
import type { Face, Skill } from '@/api/types'

export interface SkillRow {
  category: string
  /** The skill that shapes the passes. */
  applies: Skill
  /** The platform's skill that `applies` replaces, if any. */
  replaces: Skill | null
  /** A rule that keeps secrets and agency: always the platform's. */
  guard: boolean
}

const SPECIFIC: Record<Skill['scope'], number> = { platform: 0, frame: 1, user: 2 }

export function guardedCategories(skills: Skill[], face: Face): Set<string> {
  return new Set(skills.filter((s) => s.face === face && s.scope === 'platform' && s.guard).map((s) => s.category))
}

/** One row per category of `face`, guard rows last, then by category. */
export function skillRows(skills: Skill[], face: Face): SkillRow[] {
  const guarded = guardedCategories(skills, face)
  const platform = new Map<string, Skill>()
  const applies = new Map<string, Skill>()
  for (const skill of skills) {
    if (skill.face !== face || (guarded.has(skill.category) && skill.scope !== 'platform')) continue
    if (skill.scope === 'platform') platform.set(skill.category, skill)
    const best = applies.get(skill.category)
    if (!best || SPECIFIC[skill.scope] > SPECIFIC[best.scope]) applies.set(skill.category, skill)
  }
  return [...applies.entries()]
    .map(([category, skill]) => ({
      category,
      applies: skill,
      replaces: skill.scope === 'platform' ? null : (platform.get(category) ?? null),
      guard: guarded.has(category),
    }))
    .sort((a, b) => Number(a.guard) - Number(b.guard) || a.category.localeCompare(b.category))
}
