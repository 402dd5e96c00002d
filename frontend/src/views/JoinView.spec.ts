import { flushPromises, mount, RouterLinkStub } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import * as api from '@/api/frames'
import { ApiError } from '@/api/http'
import type { InvitePreview } from '@/api/types'
import { makeFrameView, SEATS } from '@/test/factories'
import JoinView from './JoinView.vue'

const push = vi.fn()
vi.mock('vue-router', async (original) => ({ ...(await original<typeof import('vue-router')>()), useRouter: () => ({ push }) }))
vi.mock('@/api/frames', () => ({ getInvite: vi.fn(), joinFrame: vi.fn() }))

const q = (id: string) => `[data-testid="${id}"]`

function preview(over: Partial<InvitePreview> = {}): InvitePreview {
  return {
    frame: { id: 'frame1', name: 'Night at the docks', production_name: 'Harbour Noir', status: 'open', mode: 'per_character' },
    my_seat: null,
    seats: [
      { id: SEATS.alice, persona: 'p-a', name: 'Alice', avatar_url: '', universal_truth: 'A dock worker with a grudge.', controller: 'open', player: null },
      { id: SEATS.bob, persona: 'p-b', name: 'Bob', avatar_url: 'http://test/bob.png', universal_truth: '', controller: 'human', player: 'ben' },
      { id: SEATS.tony, persona: 'p-t', name: 'Tony', avatar_url: '', universal_truth: 'Runs the harbour.', controller: 'ai', player: null },
    ],
    ...over,
  }
}

const link = (w: ReturnType<typeof mountView>, testid: string) =>
  w.findAllComponents(RouterLinkStub).find((c) => c.attributes('data-testid') === testid)!

const mountView = () =>
  mount(JoinView, { props: { code: 'code123' }, global: { plugins: [createPinia()], stubs: { RouterLink: RouterLinkStub } } })

describe('JoinView', () => {
  beforeEach(() => {
    setActivePinia(createPinia())
    vi.clearAllMocks()
  })

  it('shows a loading state, then the frame and every seat as a persona card', async () => {
    let answer!: (p: InvitePreview) => void
    vi.mocked(api.getInvite).mockReturnValue(new Promise((resolve) => (answer = resolve)))
    const w = mountView()
    expect(api.getInvite).toHaveBeenCalledWith('code123')
    expect(w.find(q('join-loading')).exists()).toBe(true)

    answer(preview())
    await flushPromises()
    expect(w.find(q('join-loading')).exists()).toBe(false)
    expect(w.find(q('join-frame-name')).text()).toBe('Night at the docks')
    expect(w.text()).toContain('Harbour Noir')
    const seats = w.findAll(q('join-seat'))
    expect(seats.map((s) => s.find(q('join-seat-name')).text())).toEqual(['Alice', 'Bob', 'Tony'])
    expect(seats.map((s) => s.find(q('join-seat-role')).text())).toEqual(['open', 'played by ben', 'AI'])
    expect(seats[0]!.text()).toContain('A dock worker with a grudge.')
    expect(seats[1]!.find('img').attributes('src')).toBe('http://test/bob.png')
    expect(seats[0]!.find('.avatar').text()).toBe('A')
    // Only the open seat can be taken.
    expect(w.findAll(q('join-take'))).toHaveLength(1)
    expect(seats[0]!.find(q('join-take')).exists()).toBe(true)
  })

  it("says each player reads their own character's story, or one shared story in a shared frame", async () => {
    vi.mocked(api.getInvite).mockResolvedValue(preview())
    const own = mountView()
    await flushPromises()
    expect(own.find(q('join-mode')).text()).toBe('own stories')
    expect(own.find(q('join-choose')).text()).toContain('You will read only their story.')

    vi.mocked(api.getInvite).mockResolvedValue(preview({ frame: { ...preview().frame, mode: 'shared' } }))
    const shared = mountView()
    await flushPromises()
    expect(shared.find(q('join-mode')).text()).toBe('shared story')
    expect(shared.find(q('join-choose')).text()).toContain('one shared story')
    expect(shared.text()).not.toMatch(/only their story|your own story/)
  })

  it('takes a seat and goes to the frame', async () => {
    vi.mocked(api.getInvite).mockResolvedValue(preview())
    vi.mocked(api.joinFrame).mockResolvedValue(makeFrameView())
    const w = mountView()
    await flushPromises()
    await w.find(q('join-take')).trigger('click')
    await flushPromises()
    expect(api.joinFrame).toHaveBeenCalledWith('code123', SEATS.alice)
    expect(push).toHaveBeenCalledWith('/frames/frame1')
  })

  it('shows a refused join on its seat and re-reads the table', async () => {
    vi.mocked(api.getInvite).mockResolvedValue(preview())
    vi.mocked(api.joinFrame).mockRejectedValue(new ApiError(409, 'This seat is already taken.'))
    const w = mountView()
    await flushPromises()
    await w.find(q('join-take')).trigger('click')
    await flushPromises()
    expect(push).not.toHaveBeenCalled()
    expect(w.find(`[data-seat-id="${SEATS.alice}"] ${q('join-seat-error')}`).text()).toBe('This seat is already taken.')
    expect(api.getInvite).toHaveBeenCalledTimes(2)
  })

  it('offers the frame to someone already seated', async () => {
    vi.mocked(api.getInvite).mockResolvedValue(preview({ my_seat: SEATS.bob }))
    const w = mountView()
    await flushPromises()
    expect(w.find(q('join-mine')).text()).toContain('You play Bob')
    expect(link(w, 'join-continue').props('to')).toBe('/frames/frame1')
    expect(w.find(q('join-take')).exists()).toBe(false)
  })

  it('says a wrong or rotated code does not work, with a way home', async () => {
    vi.mocked(api.getInvite).mockRejectedValue(new ApiError(404, 'Not found.'))
    const w = mountView()
    await flushPromises()
    expect(w.find(q('join-error')).text()).toContain('This invite link does not work')
    expect(link(w, 'join-home').props('to')).toBe('/')
    expect(w.find(q('join-seats')).exists()).toBe(false)
  })
})
