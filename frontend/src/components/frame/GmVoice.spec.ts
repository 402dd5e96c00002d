import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import { makeSeat, SEATS } from '@/test/factories'
import GmVoice from './GmVoice.vue'

const q = (id: string) => `[data-testid="${id}"]`
const seats = [makeSeat({ id: SEATS.alice, name: 'Alice' }), makeSeat({ id: SEATS.bob, name: 'Bob' })]

/** The page's part: the server takes what is sent (`answer`) or refuses it. */
function mountVoice(answer: boolean) {
  const sent: [string, string | null][] = []
  const onSpeak = (text: string, seat: string | null, done: (sent: boolean) => void) => {
    sent.push([text, seat])
    done(answer)
  }
  const w = mount(GmVoice, { props: { seats, busy: false, onSpeak } })
  return { w, sent }
}

describe('GmVoice', () => {
  it('narrates to everyone, or sends the chosen seat a note, and empties once sent', async () => {
    const { w, sent } = mountVoice(true)
    await w.find(q('gm-voice-text')).setValue('  A bell tolls.  ')
    expect(w.find(q('gm-voice-send')).text()).toBe('Narrate')
    await w.find('form').trigger('submit')
    await w.find(q('gm-voice-to')).setValue(SEATS.bob)
    await w.find(q('gm-voice-text')).setValue('It is your signal.')
    expect(w.find(q('gm-voice-send')).text()).toBe('Send note')
    await w.find('form').trigger('submit')
    expect(sent).toEqual([
      ['A bell tolls.', null],
      ['It is your signal.', SEATS.bob],
    ])
    expect((w.find(q('gm-voice-text')).element as HTMLTextAreaElement).value).toBe('')
  })

  it('keeps the text when the server refused it, and counts against the limit', async () => {
    const { w } = mountVoice(false)
    await w.find(q('gm-voice-text')).setValue('Keep me.')
    await w.find('form').trigger('submit')
    expect((w.find(q('gm-voice-text')).element as HTMLTextAreaElement).value).toBe('Keep me.')
    expect(w.find(q('gm-voice-count')).text()).toBe('8 / 2000')
    expect(w.find(q('gm-voice-text')).attributes('maxlength')).toBe('2000')
  })
})
