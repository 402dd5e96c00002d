import { describe, expect, it } from 'vitest'
import { matchingPreset, parseStops, samplingConfig, samplingDraft, samplingErrors } from './sampling'

describe('sampling settings', () => {
  it('writes line breaks in stop sequences as \\n and reads them back', () => {
    const config = { stop: ['\nBob:', 'END', 'back\\slash'] }
    const draft = samplingDraft(config)
    expect(draft.stop).toBe('\\nBob:\nEND\nback\\\\slash')
    expect(samplingConfig(draft).stop).toEqual(config.stop)
    expect(parseStops('\n  \nEND\n')).toEqual(['END'])
  })

  it('drops what is left blank and keeps keys it does not edit', () => {
    const draft = samplingDraft({ temperature: 0.7, max_tokens: 100, stop: ['x'] })
    draft.temperature = ''
    draft.stop = ''
    expect(samplingConfig(draft, { max_tokens: 1, custom: true })).toEqual({ max_tokens: 100, custom: true })
  })

  it('checks the server’s ranges', () => {
    const draft = samplingDraft({})
    Object.assign(draft, { temperature: 2.5, context_size: 100, frequency_penalty: -3, max_tokens: 1.5, stop: 'a'.repeat(101) })
    const errors = samplingErrors(draft)
    expect(errors.temperature).toBe('Between 0 and 2.')
    expect(errors.context_size).toBe('A whole number from 512 to 2,000,000.')
    expect(errors.frequency_penalty).toBe('Between -2 and 2.')
    expect(errors.max_tokens).toContain('whole number')
    expect(errors.stop).toBe('Each at most 100 characters.')
    expect(samplingErrors(samplingDraft({ temperature: 0, top_p: 1 })).temperature).toBe(false)
  })

  it('recognises the preset the values match', () => {
    const presets = [{ name: 'Precise', params: { temperature: 0.3, top_p: 0.85 } }]
    expect(matchingPreset(samplingDraft({ temperature: 0.3, top_p: 0.85, max_tokens: 9 }), presets)).toBe('Precise')
    expect(matchingPreset(samplingDraft({ temperature: 0.3 }), presets)).toBe('')
  })
})
