/**
 * Character sheets read this page's life (the player's own, the GM's of any seat): each is
 * fetched once and kept, so opening, closing or re-opening a sheet reads no more. A sheet
 * is fetched again only when the frame's cast changed (its `cast` key: which persona sits
 * in which seat, what the sheet's "others" are made of) or after a reload.
 */
import { defineStore } from 'pinia'
import { ref } from 'vue'
import { getSeatSheet } from '@/api/frames'
import type { CharacterSheet, Seat } from '@/api/types'

interface Entry {
  cast: string
  sheet: CharacterSheet | null
  failed: boolean
}

const keyOf = (frameId: string, seatId: string) => `${frameId}/${seatId}`

/** What a sheet is built from on the table's side: each seat's persona (not who plays it). */
export const castKey = (seats: readonly Pick<Seat, 'id' | 'persona'>[]): string =>
  seats.map((s) => `${s.id}:${s.persona}`).join(',')

export const useSheetsStore = defineStore('sheets', () => {
  const entries = ref<Record<string, Entry>>({})
  // One request per sheet at a time: two panels asking together share it.
  const inflight = new Map<string, { cast: string; request: Promise<void> }>()

  const entry = (frameId: string, seatId: string): Entry | null => entries.value[keyOf(frameId, seatId)] ?? null

  /**
   * Make sure the seat's sheet for this `cast` is held: nothing to do when it is; else one
   * request. A failure is kept (the panel says so) but not as an answer: the next `load`
   * asks again.
   */
  function load(frameId: string, seatId: string, cast = ''): Promise<void> {
    const key = keyOf(frameId, seatId)
    const held = entries.value[key]
    if (held && held.cast === cast && held.sheet) return Promise.resolve()
    const running = inflight.get(key)
    if (running) return running.cast === cast ? running.request : running.request.then(() => load(frameId, seatId, cast))
    const request = getSeatSheet(frameId, seatId)
      .then((sheet) => {
        entries.value = { ...entries.value, [key]: { cast, sheet, failed: false } }
      })
      .catch(() => {
        entries.value = { ...entries.value, [key]: { cast, sheet: null, failed: true } }
      })
      .finally(() => inflight.delete(key))
    inflight.set(key, { cast, request })
    return request
  }

  return { entry, load }
})
