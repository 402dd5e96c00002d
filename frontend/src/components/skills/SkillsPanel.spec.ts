import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { ApiError } from '@/api/http'
import { skillsApi, type Skill } from '@/api/skills'
import SkillsPanel from './SkillsPanel.vue'

vi.mock('@/api/skills', () => ({ skillsApi: { list: vi.fn(), create: vi.fn(), patch: vi.fn(), remove: vi.fn() } }))

const q = (id: string) => `[data-testid="${id}"]`
let n = 0
function skill(more: Partial<Skill>): Skill {
  n += 1
  return {
    id: `s${n}`,
    scope: 'platform',
    face: 'player',
    category: 'orientation',
    name: 'Thirty / seventy',
    text: 'About 30% conditions.',
    guard: false,
    frame: null,
    editable: false,
    updated_at: '2026-11-27T00:00:00Z',
    ...more,
  }
}
const ORIENTATION = skill({})
const AGENCY = skill({ category: 'agency', name: 'Others keep their agency', guard: true })
const AUTHOR = skill({ face: 'author', category: 'content-structure', name: 'A content entry' })

async function mountPanel(frame?: string) {
  setActivePinia(createPinia())
  const wrapper = mount(SkillsPanel, { props: { frame }, attachTo: document.body })
  await flushPromises()
  return wrapper
}

describe('SkillsPanel', () => {
  beforeEach(() => {
    vi.mocked(skillsApi.list).mockReset().mockResolvedValue([ORIENTATION, AGENCY, AUTHOR])
    vi.mocked(skillsApi.create).mockReset()
  })

  it('shows per face what applies: defaults to replace, guards that always apply', async () => {
    const w = await mountPanel()
    const rows = w.findAll(q('skill-row'))
    expect(rows.map((r) => r.attributes('data-category'))).toEqual(['orientation', 'agency'])
    expect(rows[1]?.find(q('skill-guard')).exists()).toBe(true)
    expect(rows[1]?.find(q('skill-replace')).exists()).toBe(false)
    expect(rows[0]?.find(q('skill-replace')).text()).toContain('Replace for you')
    await w.find(q('skills-face-author')).trigger('click')
    expect(w.findAll(q('skill-row')).map((r) => r.attributes('data-category'))).toEqual(['content-structure'])
  })

  it('replaces a default with the user’s own, starting from its text', async () => {
    const mine = skill({ scope: 'user', name: 'My orientation', text: 'Half and half.', editable: true })
    vi.mocked(skillsApi.create).mockResolvedValue(mine)
    const w = await mountPanel()
    await w.find(q('skill-replace')).trigger('click')
    expect((w.find(q('skill-text')).element as HTMLTextAreaElement).value).toBe(ORIENTATION.text)
    await w.find(q('skill-text')).setValue('Half and half.')
    await w.find(q('skill-form')).trigger('submit')
    await flushPromises()
    expect(skillsApi.create).toHaveBeenCalledWith({
      face: 'player',
      category: 'orientation',
      name: 'My thirty / seventy',
      text: 'Half and half.',
      frame: null,
    })
    const row = w.find(q('skill-row'))
    expect(row.attributes('data-scope')).toBe('user')
    expect(row.text()).toContain('Replaces the default “Thirty / seventy”')
  })

  it('writes a frame’s skill for its GM and keeps the form with the server’s refusal', async () => {
    vi.mocked(skillsApi.create).mockRejectedValue(
      new ApiError(409, "There is already a player skill of category 'tone' here: edit that one instead."),
    )
    const w = await mountPanel('f1')
    expect(skillsApi.list).toHaveBeenCalledWith({ frame: 'f1' })
    await w.find(q('skill-new')).trigger('click')
    await w.find(q('skill-category')).setValue('Tone')
    await w.find(q('skill-name')).setValue('Noir')
    await w.find(q('skill-text')).setValue('Short sentences.')
    await w.find(q('skill-form')).trigger('submit')
    await flushPromises()
    expect(vi.mocked(skillsApi.create).mock.calls[0]?.[0]).toMatchObject({ category: 'tone', frame: 'f1' })
    expect(w.find(q('skill-form-error')).text()).toContain('edit that one instead')
    expect((w.find(q('skill-text')).element as HTMLTextAreaElement).value).toBe('Short sentences.')
  })

  it('refuses a guard category before asking the server', async () => {
    const w = await mountPanel()
    await w.find(q('skill-new')).trigger('click')
    await w.find(q('skill-category')).setValue('agency')
    await w.find(q('skill-name')).setValue('Free for all')
    await w.find(q('skill-text')).setValue('Anyone may act for anyone.')
    await w.find(q('skill-form')).trigger('submit')
    expect(skillsApi.create).not.toHaveBeenCalled()
    expect(w.find(q('skill-form-error')).text()).toContain('keep secrets and agency')
  })

  it('says when the skills cannot be loaded and tries again', async () => {
    vi.mocked(skillsApi.list).mockRejectedValueOnce(new ApiError(0, 'Network error'))
    const w = await mountPanel()
    expect(w.find(q('skills-error')).text()).toContain('Network error')
    await w.find(q('skills-error')).find('button').trigger('click')
    await flushPromises()
    expect(w.findAll(q('skill-row'))).toHaveLength(2)
  })
})
