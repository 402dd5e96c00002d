import { describe, expect, it, vi } from 'vitest'
import { discoverModels } from '@/api/providers'
import type { Model } from '@/api/types'
import { makeModel } from '@/test/factories'
import {
  addManualId,
  alreadyAdded,
  applyBulkErrors,
  bulkPayload,
  canAdvance,
  choosePreset,
  chosenModels,
  createWizard,
  discoveryFailed,
  discoveryRequest,
  discoveryStarted,
  discoverySucceeded,
  goBack,
  goNext,
  needsDiscovery,
  normaliseEndpoint,
  parseModelList,
  providerErrors,
  serverKey,
  serverTestFinished,
  toggleAllVisible,
  toggleModel,
  visibleModels,
} from './wizard'

describe('provider step', () => {
  it('starts on OpenAI with its endpoint and requires a key', () => {
    const s = createWizard()
    expect(s.endpoint).toBe('https://api.openai.com/v1')
    expect(providerErrors(s)).toEqual({ apiKey: 'OpenAI needs an API key.' })
    expect(goNext(s)).toBe(false)
    s.apiKey = 'sk-test'
    expect(goNext(s)).toBe(true)
    expect(s.step).toBe('discover')
  })

  it('needs no key for Ollama and validates the endpoint', () => {
    const s = createWizard('ollama')
    expect(s.endpoint).toBe('http://localhost:11434')
    expect(providerErrors(s)).toEqual({})
    s.endpoint = 'localhost:11434'
    expect(providerErrors(s).endpoint).toMatch(/http/)
    s.endpoint = ''
    expect(providerErrors(s).endpoint).toMatch(/endpoint/)
  })

  it('remembers what was typed for each preset when switching', () => {
    const s = createWizard('custom')
    s.endpoint = 'http://gpu-box:8000/v1'
    s.apiKey = 'local-key'
    choosePreset(s, 'anthropic')
    expect(s.endpoint).toBe('https://api.anthropic.com/v1')
    expect(s.apiKey).toBe('')
    choosePreset(s, 'custom')
    expect(s.endpoint).toBe('http://gpu-box:8000/v1')
    expect(s.apiKey).toBe('local-key')
  })
})

describe('discovery requests', () => {
  it('lists OpenAI-compatible models at {endpoint}/models with a bearer key', () => {
    expect(discoveryRequest('openai', 'https://api.openai.com/v1/', 'sk-1')).toEqual({
      url: 'https://api.openai.com/v1/models',
      headers: { Authorization: 'Bearer sk-1' },
    })
    expect(discoveryRequest('custom', 'http://x:1/v1', '')).toEqual({ url: 'http://x:1/v1/models', headers: {} })
  })

  it('lists Ollama models at /api/tags (also from a /v1 endpoint)', () => {
    expect(discoveryRequest('ollama', 'http://localhost:11434')?.url).toBe('http://localhost:11434/api/tags')
    expect(discoveryRequest('ollama', 'http://localhost:11434/v1')?.url).toBe('http://localhost:11434/api/tags')
  })

  it('uses the static list for Anthropic', () => {
    expect(discoveryRequest('anthropic', 'https://api.anthropic.com/v1', 'k')).toBeNull()
  })

  it('parses OpenAI and Ollama answers, sorted and de-duplicated', () => {
    expect(parseModelList({ data: [{ id: 'gpt-4o' }, { id: 'gpt-4o-mini' }, { id: 'gpt-4o' }] })).toEqual(['gpt-4o', 'gpt-4o-mini'])
    expect(parseModelList({ models: [{ name: 'llama3:8b' }, { name: 'qwen2.5:7b' }] })).toEqual(['llama3:8b', 'qwen2.5:7b'])
    expect(() => parseModelList({ nope: true })).toThrow(/model list/)
    expect(() => parseModelList('html')).toThrow()
  })

  it('normalises endpoints', () => {
    expect(normaliseEndpoint('  https://a/v1//  ')).toBe('https://a/v1')
  })
})

function atSelect() {
  const s = createWizard()
  s.apiKey = 'sk-1'
  goNext(s)
  discoveryStarted(s)
  discoverySucceeded(s, ['gpt-4o', 'gpt-4o-mini', 'o3-mini'], 'browser')
  goNext(s)
  return s
}

describe('moving between steps', () => {
  it('keeps endpoint, key and selections when going back and forth', () => {
    const s = atSelect()
    expect(s.step).toBe('select')
    toggleModel(s, 'gpt-4o')
    toggleModel(s, 'o3-mini')
    goBack(s)
    goBack(s)
    expect(s.step).toBe('provider')
    expect(s.apiKey).toBe('sk-1')
    expect(s.endpoint).toBe('https://api.openai.com/v1')
    goNext(s)
    expect(needsDiscovery(s)).toBe(false) // same endpoint and key: no refetch
    goNext(s)
    expect(chosenModels(s)).toEqual(['gpt-4o', 'o3-mini'])
  })

  it('refetches after the endpoint or key changed', () => {
    const s = atSelect()
    goBack(s)
    goBack(s)
    s.apiKey = 'sk-2'
    expect(needsDiscovery(s)).toBe(true)
  })

  it('cannot leave discovery while loading or with nothing on offer', () => {
    const s = createWizard('ollama')
    goNext(s)
    discoveryStarted(s)
    expect(canAdvance(s)).toBe(false)
    discoveryFailed(s, 'offline')
    expect(canAdvance(s)).toBe(false)
    addManualId(s, ' llama3 ')
    expect(canAdvance(s)).toBe(true)
    expect(s.selected).toEqual(['llama3'])
  })
})

describe('server-side test', () => {
  it('feeds its model list to the selection step', () => {
    const s = createWizard('custom')
    s.endpoint = 'http://box:1234/v1'
    goNext(s)
    discoveryFailed(s, 'CORS')
    serverTestFinished(s, { ok: true, latency_ms: 42, models: ['m-a', 'm-b'] })
    expect(s.serverTest).toEqual({ status: 'ok', error: '', latencyMs: 42 })
    expect(s.discovery.status).toBe('ok')
    expect(s.discovery.source).toBe('server')
    expect(visibleModels(s)).toEqual(['m-a', 'm-b'])
  })

  it('keeps the browser error and shows the server error when both fail', () => {
    const s = createWizard('custom')
    s.endpoint = 'http://box:1234/v1'
    discoveryFailed(s, 'CORS')
    serverTestFinished(s, { ok: false, latency_ms: 3, error: 'connection refused' })
    expect(s.discovery.status).toBe('error')
    expect(s.serverTest.error).toBe('connection refused')
  })
})

describe('selection', () => {
  it('filters and selects all visible', () => {
    const s = atSelect()
    s.filter = 'MINI'
    expect(visibleModels(s)).toEqual(['gpt-4o-mini', 'o3-mini'])
    toggleAllVisible(s)
    expect(chosenModels(s)).toEqual(['gpt-4o-mini', 'o3-mini'])
    toggleAllVisible(s)
    expect(chosenModels(s)).toEqual([])
  })
})

describe('models already added', () => {
  const model = (over: Partial<Model>) => makeModel({ id: 'x', name: 'Mine', ...over })

  it('knows an endpoint however it was written, an Ollama root as its /v1', () => {
    expect(serverKey('openai', 'https://API.OpenAI.com/v1/chat/completions/')).toBe('https://api.openai.com/v1')
    expect(serverKey('ollama', 'http://localhost:11434/v1')).toBe(serverKey('ollama', 'http://localhost:11434/'))
    expect(serverKey('openai_compatible', 'http://box/v1')).not.toBe(serverKey('openai_compatible', 'http://box'))
  })

  it('names the models already added at this endpoint, and select-all skips them', () => {
    const s = createWizard('ollama')
    const added = alreadyAdded(s, [
      model({ provider: 'ollama', api_endpoint: 'http://localhost:11434/v1', model_id: 'llama3', name: 'Llama' }),
      model({ provider: 'ollama', api_endpoint: 'http://other:11434', model_id: 'qwen' }),
    ])
    expect(added).toEqual({ llama3: 'Llama' })
    discoverySucceeded(s, ['llama3', 'qwen'], 'browser')
    toggleAllVisible(s, added)
    expect(chosenModels(s)).toEqual(['qwen'])
    toggleAllVisible(s, added)
    expect(chosenModels(s)).toEqual([])
  })
})

describe('bulk add', () => {
  it('builds one item per chosen model with provider, endpoint and key', () => {
    const s = atSelect()
    toggleModel(s, 'o3-mini')
    toggleModel(s, 'gpt-4o')
    expect(bulkPayload(s)).toEqual([
      { provider: 'openai', api_endpoint: 'https://api.openai.com/v1', model_id: 'gpt-4o', api_key: 'sk-1' },
      { provider: 'openai', api_endpoint: 'https://api.openai.com/v1', model_id: 'o3-mini', api_key: 'sk-1' },
    ])
  })

  it('omits the key when none was given', () => {
    const s = createWizard('ollama')
    addManualId(s, 'llama3')
    expect(bulkPayload(s)).toEqual([{ provider: 'ollama', api_endpoint: 'http://localhost:11434', model_id: 'llama3' }])
  })

  it('maps per-item errors back to model ids', () => {
    const s = atSelect()
    toggleModel(s, 'gpt-4o')
    toggleModel(s, 'o3-mini')
    const payload = bulkPayload(s)
    applyBulkErrors(s, payload, [{}, { model_id: ['This model is already configured for this endpoint.'] }])
    expect(s.itemErrors).toEqual({ 'o3-mini': ['This model is already configured for this endpoint.'] })
  })

  it('offers the offline narrator with no endpoint or key to type', async () => {
    const s = createWizard()
    s.apiKey = 'sk-typed-for-openai'
    choosePreset(s, 'offline')
    expect(providerErrors(s)).toEqual({})
    expect(goNext(s)).toBe(true)
    const fetchImpl = vi.fn()
    const models = await discoverModels('offline', s.endpoint, '', fetchImpl)
    expect(fetchImpl).not.toHaveBeenCalled()
    discoverySucceeded(s, models, 'static')
    toggleModel(s, 'narrator', true)
    expect(bulkPayload(s)).toEqual([{ provider: 'offline', api_endpoint: 'offline://narrator', model_id: 'narrator' }])
  })
})
