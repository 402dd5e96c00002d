import { describe, expect, it } from 'vitest'
import { deleteWarning, quotedList } from './deletes'

const ASSISTANTS = { one: 'its assistant', many: 'its assistants', verb: ['goes too', 'go too'] as [string, string] }

describe('delete warnings', () => {
  it('lists names the way a sentence does', () => {
    expect(quotedList(['A'])).toBe('“A”')
    expect(quotedList(['A', 'B', 'C'])).toBe('“A”, “B” and “C”')
  })

  it('names what goes with the object, singular or plural, and nothing when nothing does', () => {
    expect(deleteWarning('Ada')).toBe('“Ada” will be deleted. This cannot be undone.')
    expect(deleteWarning('Ada', [{ ...ASSISTANTS, names: ['Ada (GPT)'] }])).toBe(
      '“Ada” will be deleted. Its assistant “Ada (GPT)” goes too. This cannot be undone.',
    )
    expect(deleteWarning('Ada', [{ ...ASSISTANTS, names: ['X', 'Y'] }])).toBe(
      '“Ada” will be deleted. Its assistants “X” and “Y” go too. This cannot be undone.',
    )
  })
})
