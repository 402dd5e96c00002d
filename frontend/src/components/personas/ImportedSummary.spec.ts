import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import ImportedSummary from './ImportedSummary.vue'

describe('ImportedSummary', () => {
  it('shows what a card kept: creator notes to read, instructions marked as prompt text', () => {
    const imported = {
      card: {
        creator_notes: 'Best in slow scenes.',
        system_prompt: 'Third person, past tense.',
        creator: 'ana',
        character_version: '1.2',
        alternate_greetings: ['Hi', 'Hey'],
        character_book: { entries: [{}, {}, {}] },
      },
    }
    const w = mount(ImportedSummary, { props: { imported } })
    expect(w.find('summary').text()).toBe('Imported from a character card')
    const text = w.text()
    expect(text).toContain('Best in slow scenes.')
    expect(text).toContain('ana, version 1.2')
    expect(text).toContain('2 kept for export')
    expect(text).toContain('3 entries')
    const prompt = w.findAll('dt').filter((dt) => dt.text().includes('in its prompt'))
    expect(prompt.map((dt) => dt.text().replace('in its prompt', '').trim())).toEqual(['System prompt'])
  })

  it('names a LuminoraCore template and its rules', () => {
    const w = mount(ImportedSummary, { props: { imported: { luminoracore: { behavioral_rules: ['Be brief'] } } } })
    expect(w.find('summary').text()).toBe('Imported from a LuminoraCore template')
    expect(w.text()).toContain('Be brief')
  })

  it('shows nothing for a persona made here, or a value of the wrong shape', () => {
    expect(mount(ImportedSummary, { props: { imported: {} } }).find('details').exists()).toBe(false)
    expect(mount(ImportedSummary, { props: { imported: 'x' } }).find('details').exists()).toBe(false)
  })
})
