import { describe, expect, it, vi } from 'vitest'
import { DiscoveryError, discoverModels } from './providers'

const ok = (body: unknown) => new Response(JSON.stringify(body), { status: 200 })

describe('discoverModels', () => {
  it('fetches the OpenAI list from the browser with the key, without cookies', async () => {
    const fetchImpl = vi.fn().mockResolvedValue(ok({ data: [{ id: 'b' }, { id: 'a' }] }))
    await expect(discoverModels('openai', 'https://api.openai.com/v1', 'sk-1', fetchImpl)).resolves.toEqual(['a', 'b'])
    expect(fetchImpl).toHaveBeenCalledWith('https://api.openai.com/v1/models', {
      headers: { Authorization: 'Bearer sk-1' },
      credentials: 'omit',
      mode: 'cors',
    })
  })

  it('returns the static Anthropic list without any request', async () => {
    const fetchImpl = vi.fn()
    const list = await discoverModels('anthropic', 'https://api.anthropic.com/v1', 'k', fetchImpl)
    expect(list).toContain('claude-sonnet-4-5')
    expect(fetchImpl).not.toHaveBeenCalled()
  })

  it('explains CORS/offline failures plainly', async () => {
    const fetchImpl = vi.fn().mockRejectedValue(new TypeError('Failed to fetch'))
    const err = await discoverModels('ollama', 'http://localhost:11434', '', fetchImpl).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(DiscoveryError)
    expect((err as Error).message).toMatch(/could not reach http:\/\/localhost:11434\/api\/tags.*CORS/)
  })

  it('explains a refused key', async () => {
    const fetchImpl = vi.fn().mockResolvedValue(new Response('{}', { status: 401 }))
    await expect(discoverModels('openai', 'https://api.openai.com/v1', 'bad', fetchImpl)).rejects.toThrow(/HTTP 401.*API key/)
  })
})
