import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ApiError } from '@/api/http'
import type { FrameBan } from '@/api/types'
import { makeSeat, SEATS } from '@/test/factories'
import FrameBans from './FrameBans.vue'

const listBans = vi.fn<(frameId: string) => Promise<FrameBan[]>>()
const liftBan = vi.fn<(frameId: string, userId: number) => Promise<void>>()
vi.mock('@/api/frames', () => ({
  listBans: (id: string) => listBans(id),
  liftBan: (id: string, user: number) => liftBan(id, user),
}))

const ban = (user: number, player: string): FrameBan => ({ user, player, banned_at: '2026-11-26T15:00:00Z' })
const alice = makeSeat({ id: SEATS.alice, name: 'Alice', user: 7, player: 'ada' })

afterEach(() => {
  listBans.mockReset()
  liftBan.mockReset()
})

describe('FrameBans', () => {
  it('lists the kicked players and lets one back', async () => {
    listBans.mockResolvedValue([ban(7, 'ada'), ban(8, 'bo')])
    liftBan.mockResolvedValue()
    const w = mount(FrameBans, { props: { frameId: 'f1', seats: [alice] } })
    await flushPromises()
    expect(listBans).toHaveBeenCalledWith('f1')
    expect(w.findAll('[data-testid="frame-ban"] .truncate').map((name) => name.text())).toEqual(['ada', 'bo'])

    await w.find('[data-user-id="7"] [data-testid="frame-ban-lift"]').trigger('click')
    await flushPromises()
    expect(liftBan).toHaveBeenCalledWith('f1', 7)
    expect(w.findAll('[data-testid="frame-ban"]').map((li) => li.attributes('data-user-id'))).toEqual(['8'])
  })

  it('shows nothing while nobody is banned, and reads the list again when a seat changes hands', async () => {
    listBans.mockResolvedValue([])
    const w = mount(FrameBans, { props: { frameId: 'f1', seats: [alice] } })
    await flushPromises()
    expect(w.find('[data-testid="frame-bans"]').exists()).toBe(false)

    listBans.mockResolvedValue([ban(7, 'ada')])
    await w.setProps({ seats: [{ ...alice, controller: 'open', user: null, player: null }] }) // the GM kicked ada
    await flushPromises()
    expect(listBans).toHaveBeenCalledTimes(2)
    expect(w.find('[data-testid="frame-ban"]').text()).toContain('ada')
  })

  it('says why a player could not be let back, and keeps the list true', async () => {
    listBans.mockResolvedValue([ban(7, 'ada')])
    liftBan.mockRejectedValue(new ApiError(403, 'Only the frame\'s GM can do that.'))
    const w = mount(FrameBans, { props: { frameId: 'f1', seats: [alice] } })
    await flushPromises()
    await w.find('[data-testid="frame-ban-lift"]').trigger('click')
    await flushPromises()
    expect(w.find('[data-testid="frame-bans-error"]').text()).toBe("Only the frame's GM can do that.")
    expect(listBans).toHaveBeenCalledTimes(2) // read again, as the server has it
    expect(w.findAll('[data-testid="frame-ban"]')).toHaveLength(1)
  })
})
