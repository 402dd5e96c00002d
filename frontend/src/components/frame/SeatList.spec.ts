import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import { makeSeat, SEATS } from '@/test/factories'
import SeatList from './SeatList.vue'

const seats = [
  makeSeat({ id: SEATS.alice, name: 'Alice', user: 2 }),
  makeSeat({ id: SEATS.bob, name: 'Bob', user: 3 }),
  makeSeat({ id: SEATS.tony, name: 'Tony', controller: 'ai', user: null, assistant: 'as-t' }),
]

function list(typing: string[]) {
  return mount(SeatList, {
    props: { seats, mySeats: [SEATS.alice], typing: new Set(typing), online: new Set<string>(), windowOf: () => undefined, failed: () => false, now: 0 },
  })
}

const role = (w: ReturnType<typeof list>, seat: string) => w.find(`[data-seat-id="${seat}"] .role`).text()

describe('SeatList', () => {
  it('shows an AI seat thinking while its assistant writes, and a player typing', () => {
    const w = list([SEATS.bob, SEATS.tony])
    expect(role(w, SEATS.tony)).toBe('thinking')
    expect(role(w, SEATS.bob)).toBe('typing')
    expect(w.findAll('[data-testid="seat-typing"]')).toHaveLength(2)
  })

  it('shows an idle AI seat as AI', () => {
    const w = list([])
    expect(role(w, SEATS.tony)).toContain('AI')
    expect(w.find('[data-testid="seat-typing"]').exists()).toBe(false)
  })
})
