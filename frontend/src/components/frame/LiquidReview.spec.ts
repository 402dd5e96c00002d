import { flushPromises, mount } from '@vue/test-utils'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { h } from 'vue'
import { ApiError } from '@/api/http'
import * as api from '@/api/frames'
import { makeLiquid, SEATS } from '@/test/factories'
import LiquidCard from './LiquidCard.vue'
import LiquidReview from './LiquidReview.vue'

vi.mock('@/api/frames', () => ({ commitLiquid: vi.fn(), editLiquid: vi.fn(), regenerateLiquid: vi.fn() }))

const q = (id: string) => `[data-testid="${id}"]`
const frame = { mode: 'per_character', tempo: 1, liquid_visibility: 'all' } as const
const nameOf = (seat: string) => ({ [SEATS.tony]: 'Tony', [SEATS.bob]: 'Bob' })[seat] ?? 'Someone'
const flags = [{ kind: 'internal_truth', owner: 'Bob', excerpt: 'bob-secret' }]
/** The GM's copy: whole, with the soft pass's words. */
const held = makeLiquid({ id: 'l1', seat: SEATS.tony, author: null, held: true, content: 'Tony whispers bob-secret.', refined: 'Tony tells the room bob-secret.' })
/** What another player's socket brings of it: no words at all. */
const { content: _c, refined: _r, capable_reason: _cr, analysis_note: _n, ...placeholder } = { ...held, pscale: 0 }

/** The GM's Intentions panel: the card with the review in its slot. */
const mountGm = (liquid = held) =>
  mount(LiquidCard, { props: { liquid, frame, nameOf, now: 0, flags }, slots: { default: () => h(LiquidReview, { liquid, nameOf, flags }) } })

beforeEach(() => vi.clearAllMocks())

describe('a held AI intention', () => {
  it('is, for another player, only that its character is about to act: no word of it, no review', () => {
    const w = mount(LiquidCard, { props: { liquid: placeholder, frame, nameOf, now: 0 } })
    expect(w.find(q('liquid-held')).text()).toBe('Tony is about to act — the GM is reviewing it.')
    expect(w.find(q('liquid-held-badge')).text()).toBe('in review')
    expect(w.find(q('liquid-hidden')).exists()).toBe(false)
    expect(w.find(q('liquid-text')).exists()).toBe(false)
    expect(w.text()).not.toContain('bob-secret')
    expect(w.text()).not.toContain('undefined')
    expect(w.find(q('liquid-review')).exists()).toBe(false)
  })

  it('keeps the usual wording for a hidden intention that is not held', () => {
    const { content: _, ...hidden } = makeLiquid({ id: 'l2', seat: SEATS.bob })
    const w = mount(LiquidCard, { props: { liquid: hidden, frame: { ...frame, liquid_visibility: 'own' }, nameOf, now: 0 } })
    expect(w.find(q('liquid-hidden')).text()).toContain('Wrote an intention you cannot read.')
    expect(w.find(q('liquid-held')).exists()).toBe(false)
  })

  it('is, for the GM, whole, marked held, with what it gives away and the three actions', () => {
    const w = mountGm()
    expect(w.find(q('liquid-card')).attributes('data-held')).toBe('true')
    expect(w.find(q('liquid-held-badge')).text()).toBe('held')
    expect(w.find(q('liquid-text')).text()).toBe('Tony whispers bob-secret.')
    expect(w.find(q('liquid-review-note')).text()).toContain('Held for your review.')
    expect(w.find(q('liquid-review-note')).text()).toContain('The players see only that Tony is about to act.')
    expect(w.find(q('liquid-review-flags')).text()).toBe('internal truth of Bob “bob-secret”')
    expect(w.find(q('liquid-release')).exists()).toBe(true)
    expect(w.find(q('liquid-edit')).exists()).toBe(true)
    expect(w.find(q('liquid-regenerate')).exists()).toBe(true)
  })

  it('is released by committing it; a refusal is said in place and the buttons come back', async () => {
    let refuse!: (e: unknown) => void
    vi.mocked(api.commitLiquid).mockReturnValueOnce(new Promise((_, reject) => (refuse = reject)))
    const w = mountGm()
    await w.find(q('liquid-release')).trigger('click')
    expect(api.commitLiquid).toHaveBeenCalledWith('l1')
    // Busy: every action held, a spinner on the one running.
    expect(w.find(q('liquid-release')).attributes('disabled')).toBeDefined()
    expect(w.find(q('liquid-regenerate')).attributes('disabled')).toBeDefined()
    expect(w.find(q('liquid-release')).find('.spinner').exists()).toBe(true)
    refuse(new ApiError(409, 'This intention is no longer submitted.'))
    await flushPromises()
    expect(w.find(q('liquid-review-error')).text()).toBe('This intention is no longer submitted.')
    expect(w.find(q('liquid-release')).attributes('disabled')).toBeUndefined()
    const released = { ...held, held: false, status: 'committed' as const, author: 1 }
    vi.mocked(api.commitLiquid).mockResolvedValueOnce(released)
    await w.find(q('liquid-release')).trigger('click')
    await flushPromises()
    expect(w.find(q('liquid-review-error')).exists()).toBe(false)
    expect(w.findComponent(LiquidReview).emitted('saved')).toEqual([[released]])
  })

  it('is regenerated: withdrawn at once on the page, the socket bringing the new one; a 403 is said', async () => {
    vi.mocked(api.regenerateLiquid).mockRejectedValueOnce(new ApiError(403, 'Only the GM may do this.'))
    const w = mount(LiquidReview, { props: { liquid: held, nameOf, flags } })
    await w.find(q('liquid-regenerate')).trigger('click')
    await flushPromises()
    expect(api.regenerateLiquid).toHaveBeenCalledWith('l1')
    expect(w.find(q('liquid-review-error')).text()).toBe('Only the GM may do this.')
    expect(w.emitted('saved')).toBeUndefined()
    vi.mocked(api.regenerateLiquid).mockResolvedValueOnce(undefined)
    await w.find(q('liquid-regenerate')).trigger('click')
    await flushPromises()
    expect(w.emitted('saved')).toEqual([[{ ...held, status: 'withdrawn' }]])
    expect(w.find(q('liquid-review-error')).exists()).toBe(false)
  })

  it('is edited inline: the GM’s words saved, still held; a refusal keeps the form and its text', async () => {
    vi.mocked(api.editLiquid).mockRejectedValueOnce(new ApiError(409, 'This intention is no longer submitted.'))
    const w = mount(LiquidReview, { props: { liquid: held, nameOf, flags } })
    await w.find(q('liquid-edit')).trigger('click')
    const input = w.find<HTMLTextAreaElement>(q('liquid-review-input'))
    expect(input.element.value).toBe('Tony whispers bob-secret.')
    expect(w.find(q('liquid-review-save')).attributes('disabled')).toBeDefined() // nothing changed yet
    await input.setValue('  Tony looks away.  ')
    await w.find(q('liquid-review-form')).trigger('submit')
    await flushPromises()
    expect(api.editLiquid).toHaveBeenCalledWith('l1', 'Tony looks away.')
    expect(w.find(q('liquid-review-error')).text()).toContain('no longer submitted')
    expect(w.find<HTMLTextAreaElement>(q('liquid-review-input')).element.value).toBe('  Tony looks away.  ')
    const edited = { ...held, content: 'Tony looks away.', author: 1, revision: 2 }
    vi.mocked(api.editLiquid).mockResolvedValueOnce(edited)
    await w.find(q('liquid-review-form')).trigger('submit')
    await flushPromises()
    expect(w.find(q('liquid-review-form')).exists()).toBe(false)
    expect(w.emitted('saved')).toEqual([[edited]])
    // Edited, the words are the GM's: still held until released.
    await w.setProps({ liquid: edited })
    expect(w.find(q('liquid-review-note')).text()).toContain('You rewrote it')
    expect(w.find(q('liquid-release')).exists()).toBe(true)
  })
})
