/** Skills: prompt documents that shape a pass (the platform's, a frame's, the user's own). */
import { http } from './http'
import type { Face, Skill, SkillInput } from './types'

export type { Face, Skill, SkillInput }

const one = (id: string) => `/api/skills/${encodeURIComponent(id)}`

export const skillsApi = {
  /** The platform's skills and, without `frame`, the caller's own; with it, that frame's (GM). */
  list(where: { frame?: string; face?: Face } = {}) {
    const query = new URLSearchParams(Object.entries(where).filter(([, v]) => v) as [string, string][])
    return http.get<Skill[]>(`/api/skills${query.size ? `?${query}` : ''}`)
  },
  create: (input: SkillInput) => http.post<Skill>('/api/skills', input),
  patch: (id: string, input: Partial<SkillInput>) => http.patch<Skill>(one(id), input),
  remove: (id: string) => http.delete(one(id)),
}
