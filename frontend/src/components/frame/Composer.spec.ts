import { flushPromises, mount } from '@vue/test-utils'
import { describe, expect, it, vi } from 'vitest'
import type { Face, FrameWindow, Liquid } from '@/api/types'
import { makeLiquid, makeWindow } from '@/test/factories'
import { LIQUID_MAX } from '@/lib/frame'
import Composer from './Composer.vue'

const q = (id: string) => `[data-testid="${id}"]`
const T0 = Date.parse('2025-01-01T00:00:05Z')
const frame = { mode: 'per_character' as const, tempo: 1, liquid_visibility: 'all' as const, status: 'open' as const }

type Extra = {
  window?: FrameWindow
  blocked?: string
  now?: number
  submit?: (content: string, face: Face) => Promise<boolean>
  faces?: Face[]
  edit?: (l: Liquid, content: string) => Promise<boolean>
  status?: 'open' | 'paused' | 'closed'
}

function mountComposer(liquids: Liquid[] = [], extra: Extra = {}) {
  return mount(Composer, {
    props: {
      liquids,
      frame: { ...frame, status: extra.status ?? 'open' },
      nameOf: () => 'Bob',
      now: extra.now ?? T0,
      window: extra.window ?? null,
      busy: null,
      blocked: extra.blocked ?? '',
      submit: extra.submit ?? vi.fn(async () => true),
      faces: extra.faces,
      edit: extra.edit ?? vi.fn(async () => true),
    },
  })
}

describe('Composer', () => {
  it('submits the text, says the player is typing meanwhile, and clears once the server took it', async () => {
    const submit = vi.fn(async () => true)
    const w = mountComposer([], { submit })
    const input = w.find(q('composer-input'))
    await input.setValue('I climb the mast.')
    expect(w.emitted('typing')).toHaveLength(1)
    await w.find(q('composer-form')).trigger('submit')
    await flushPromises()
    expect(submit).toHaveBeenCalledWith('I climb the mast.', 'player')
    expect(w.emitted('stopTyping')).toHaveLength(1)
    expect((input.element as HTMLTextAreaElement).value).toBe('')
  })

  it('keeps the text when the submit is refused (too long, offline), to fix or send again', async () => {
    let answer!: (ok: boolean) => void
    const submit = vi.fn(() => new Promise<boolean>((resolve) => (answer = resolve)))
    const w = mountComposer([], { submit })
    const input = w.find(q('composer-input'))
    await input.setValue('I climb the mast.')
    await w.find(q('composer-form')).trigger('submit')
    expect((input.element as HTMLTextAreaElement).value).toBe('I climb the mast.')
    answer(false)
    await flushPromises()
    expect((input.element as HTMLTextAreaElement).value).toBe('I climb the mast.')
    submit.mockResolvedValueOnce(true)
    await w.find(q('composer-form')).trigger('submit')
    await flushPromises()
    expect(submit).toHaveBeenCalledTimes(2)
    expect((input.element as HTMLTextAreaElement).value).toBe('')
  })

  it("takes no more than the server's limit and counts the characters, warning near the end", async () => {
    const w = mountComposer()
    const input = w.find(q('composer-input'))
    expect(input.attributes('maxlength')).toBe(String(LIQUID_MAX))
    expect(LIQUID_MAX).toBe(4000)
    expect(w.find(q('composer-count')).text()).toBe(`0 / ${LIQUID_MAX}`)
    await input.setValue('x'.repeat(312))
    expect(w.find(q('composer-count')).text()).toBe(`312 / ${LIQUID_MAX}`)
    expect(w.find(q('composer-count')).classes()).not.toContain('near')
    await input.setValue('x'.repeat(LIQUID_MAX - 10))
    expect(w.find(q('composer-count')).classes()).toContain('near')
  })

  it('keeps an edit open when the server refuses it', async () => {
    const draft = makeLiquid({ id: 'l1', content: 'I wave.' })
    const edit = vi.fn(async () => false)
    const w = mountComposer([draft], { edit })
    await w.find(q('liquid-edit')).trigger('click')
    expect(w.find(q('liquid-edit-input')).attributes('maxlength')).toBe(String(LIQUID_MAX))
    await w.find(q('liquid-edit-input')).setValue('I wave at Bob.')
    await w.find(q('liquid-edit-form')).trigger('submit')
    await flushPromises()
    expect(edit).toHaveBeenCalledWith(draft, 'I wave at Bob.')
    expect((w.find(q('liquid-edit-input')).element as HTMLTextAreaElement).value).toBe('I wave at Bob.')
  })

  it('offers no action on a draft once the scene is closed', () => {
    const w = mountComposer([makeLiquid({ id: 'l1', content: 'I wave.' })], { status: 'closed', blocked: 'The scene is closed.' })
    expect(w.find(q('liquid-card')).exists()).toBe(true)
    expect(w.find(q('liquid-withdraw')).exists()).toBe(false)
    expect(w.find(q('liquid-edit')).exists()).toBe(false)
    expect(w.find(q('liquid-commit')).exists()).toBe(false)
  })

  it('shows the verdict arriving: reading first, then time scale, window, interruptive and capable with its reason', async () => {
    const draft = makeLiquid({ id: 'l1' })
    const w = mountComposer([draft])
    expect(w.find(q('soft-verdict')).attributes('data-pending')).toBe('true')
    await w.setProps({
      liquids: [
        {
          ...draft,
          pscale: -1,
          window_seconds: 22.5,
          interruptive: true,
          targets: ['seat-b'],
          capable: false,
          capable_reason: 'Your arm is broken.',
          refined: 'Alice tries to punch Bob.',
          analysis_source: 'model',
        },
      ],
    })
    expect(w.find(q('pscale-chip')).text()).toContain('about a minute')
    expect(w.find(q('verdict-window')).text()).toBe('window 23 s')
    expect(w.find(q('verdict-interruptive')).text()).toContain('interrupts Bob')
    expect(w.find(q('verdict-capable')).text()).toBe('not capable')
    expect(w.find(q('verdict-reason')).text()).toBe('Your arm is broken.')
    expect(w.find(q('verdict-refined')).text()).toContain('Alice tries to punch Bob.')
  })

  it('edits, withdraws and commits a draft; a committed one counts down instead', async () => {
    const draft = makeLiquid({ id: 'l1', content: 'I wave.' })
    const edit = vi.fn(async () => true)
    const w = mountComposer([draft], { edit })
    await w.find(q('liquid-edit')).trigger('click')
    await w.find(q('liquid-edit-input')).setValue('I wave at Bob.')
    await w.find(q('liquid-edit-form')).trigger('submit')
    await flushPromises()
    expect(edit).toHaveBeenCalledWith(draft, 'I wave at Bob.')
    expect(w.find(q('liquid-edit-form')).exists()).toBe(false)
    await w.find(q('liquid-withdraw')).trigger('click')
    await w.find(q('liquid-commit')).trigger('click')
    expect(w.emitted('withdraw')).toEqual([[draft]])
    expect(w.emitted('commit')).toEqual([[draft]])

    const window = makeWindow({ id: 'w1', expires_at: new Date(T0 + 12_000).toISOString() })
    const committed = mountComposer([{ ...draft, status: 'committed' }], { window })
    expect(committed.find(q('liquid-commit')).exists()).toBe(false)
    expect(committed.find(q('window-countdown')).text()).toContain('12 s')
    await committed.setProps({ window: { ...window, expires_at: null, remaining_seconds: 9 }, now: T0 + 60_000 })
    expect(committed.find(q('window-countdown')).attributes('data-frozen')).toBe('true')
    expect(committed.find(q('window-countdown')).text()).toContain('9 s')
  })

  it('says why nothing can be written', () => {
    const w = mountComposer([], { blocked: 'You are no longer in this frame.' })
    expect(w.find(q('composer-form')).exists()).toBe(false)
    expect(w.find(q('composer-blocked')).text()).toBe('You are no longer in this frame.')
  })

  it('shows no face switch to a player the GM opened no face to', () => {
    const w = mountComposer()
    expect(w.find(q('face-switch')).exists()).toBe(false)
    expect(w.find(q('composer-input')).attributes('placeholder')).toMatch(/^What does your character do\?/)
  })

  it('switches to the author and designer faces: their placeholder, hint and button, and sends in that face', async () => {
    const submit = vi.fn(async () => true)
    const w = mountComposer([], { submit, faces: ['player', 'author', 'designer'] })
    expect(w.findAll('[role="radio"]').map((b) => b.text())).toEqual(['Player', 'Author', 'Designer'])
    expect(w.find(q('face-hint')).exists()).toBe(false)
    await w.find(q('face-author')).trigger('click')
    expect(w.find(q('face-author')).attributes('aria-checked')).toBe('true')
    expect(w.find(q('composer-input')).attributes('placeholder')).toMatch(/^Describe a place, a person, a thing…/)
    expect(w.find(q('face-hint')).text()).toContain('add to the world')
    expect(w.find(q('composer-submit')).text()).toBe('Add to the world')
    await w.find(q('composer-input')).setValue('A harbour called Greyhaven.')
    expect(w.emitted('typing')).toBeUndefined() // writing for the world is no character's action
    await w.find(q('composer-form')).trigger('submit')
    await flushPromises()
    expect(submit).toHaveBeenCalledWith('A harbour called Greyhaven.', 'author')
    await w.find(q('face-designer')).trigger('click')
    expect(w.find(q('composer-input')).attributes('placeholder')).toMatch(/^Write an instruction for the storyteller…/)
    expect(w.find(q('composer-submit')).text()).toBe('Add the skill')
  })

  it('goes back to the first face when the one chosen is closed meanwhile', async () => {
    const w = mountComposer([], { faces: ['player', 'author'] })
    await w.find(q('face-author')).trigger('click')
    await w.setProps({ faces: ['player'] })
    expect(w.find(q('face-switch')).exists()).toBe(false)
    expect(w.find(q('composer-form')).attributes('data-face')).toBe('player')
  })
})
