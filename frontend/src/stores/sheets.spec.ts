import { flushPromises } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import type { CharacterSheet } from '@/api/types'
import { castKey, useSheetsStore } from './sheets'

const getSeatSheet = vi.fn<(frameId: string, seatId: string) => Promise<CharacterSheet>>()
vi.mock('@/api/frames', () => ({ getSeatSheet: (f: string, s: string) => getSeatSheet(f, s) }))

const sheet = (name: string) => ({ seat: 's1', me: { name } }) as unknown as CharacterSheet

describe('sheets store', () => {
  beforeEach(() => {
    setActivePinia(createPinia())
    getSeatSheet.mockReset()
  })

  it('reads a sheet once for the page’s life, however often it is asked for', async () => {
    getSeatSheet.mockResolvedValue(sheet('Alice'))
    const sheets = useSheetsStore()
    await Promise.all([sheets.load('f1', 's1', 'k'), sheets.load('f1', 's1', 'k')])
    await sheets.load('f1', 's1', 'k')
    expect(getSeatSheet).toHaveBeenCalledTimes(1)
    expect(sheets.entry('f1', 's1')?.sheet?.me.name).toBe('Alice')
    await sheets.load('f1', 's2', 'k') // another seat is another sheet
    expect(getSeatSheet).toHaveBeenCalledTimes(2)
  })

  it('reads it again when the cast changed, even while the first read runs', async () => {
    let answer!: (s: CharacterSheet) => void
    getSeatSheet.mockImplementationOnce(() => new Promise((resolve) => (answer = resolve)))
    getSeatSheet.mockResolvedValueOnce(sheet('Alice again'))
    const sheets = useSheetsStore()
    const first = sheets.load('f1', 's1', 'old')
    const second = sheets.load('f1', 's1', 'new')
    answer(sheet('Alice'))
    await Promise.all([first, second])
    await flushPromises()
    expect(getSeatSheet).toHaveBeenCalledTimes(2)
    expect(sheets.entry('f1', 's1')?.sheet?.me.name).toBe('Alice again')
  })

  it('keeps a failure to show, but asks again next time', async () => {
    getSeatSheet.mockRejectedValueOnce(new Error('down'))
    getSeatSheet.mockResolvedValueOnce(sheet('Alice'))
    const sheets = useSheetsStore()
    await sheets.load('f1', 's1')
    expect(sheets.entry('f1', 's1')).toMatchObject({ sheet: null, failed: true })
    await sheets.load('f1', 's1')
    expect(sheets.entry('f1', 's1')).toMatchObject({ failed: false })
    expect(getSeatSheet).toHaveBeenCalledTimes(2)
  })

  it('keys the cast by which persona sits where, not by who plays it', () => {
    const seats = [
      { id: 'a', persona: 'p1' },
      { id: 'b', persona: 'p2' },
    ]
    expect(castKey(seats)).toBe(castKey(seats.map((s) => ({ ...s, controller: 'ai' }))))
    expect(castKey(seats)).not.toBe(castKey([...seats, { id: 'c', persona: 'p3' }]))
  })
})
