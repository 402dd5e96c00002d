import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ApiError, errorFromBody, http, readCookie, setCsrfToken } from './http'

function jsonResponse(status: number, body: unknown) {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' },
  })
}

describe('http', () => {
  const fetchMock = vi.fn()
  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock)
    document.cookie = 'csrftoken=tok123; path=/'
  })
  afterEach(() => {
    vi.unstubAllGlobals()
    fetchMock.mockReset()
    document.cookie = 'csrftoken=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/'
    setCsrfToken('')
  })

  it('sends JSON with the CSRF header on unsafe methods, same-origin credentials', async () => {
    fetchMock.mockResolvedValue(jsonResponse(201, { id: 'w1' }))
    const out = await http.post<{ id: string }>('/api/worlds', { name: 'x' })
    expect(out).toEqual({ id: 'w1' })
    const [url, init] = fetchMock.mock.calls[0] as [string, RequestInit]
    expect(url).toBe('/api/worlds')
    expect(init.credentials).toBe('same-origin')
    expect(init.body).toBe('{"name":"x"}')
    expect((init.headers as Record<string, string>)['X-CSRFToken']).toBe('tok123')
  })

  it('does not send the CSRF header on GET', async () => {
    fetchMock.mockResolvedValue(jsonResponse(200, []))
    await http.get('/api/worlds')
    const init = fetchMock.mock.calls[0]?.[1] as RequestInit
    expect((init.headers as Record<string, string>)['X-CSRFToken']).toBeUndefined()
  })

  it('falls back to the token from GET /api/auth/csrf when the cookie is missing', async () => {
    document.cookie = 'csrftoken=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/'
    setCsrfToken('from-body')
    fetchMock.mockResolvedValue(new Response(null, { status: 204 }))
    await http.delete('/api/worlds/1')
    const init = fetchMock.mock.calls[0]?.[1] as RequestInit
    expect((init.headers as Record<string, string>)['X-CSRFToken']).toBe('from-body')
  })

  it('throws a typed ApiError with detail and field errors', async () => {
    fetchMock.mockResolvedValue(jsonResponse(400, { detail: 'Invalid input.', errors: { name: ['Too long.'] } }))
    const err = await http.post('/api/worlds', {}).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect(err).toMatchObject({ status: 400, detail: 'Invalid input.', errors: { name: ['Too long.'] } })
  })

  it('turns a network failure into status 0', async () => {
    fetchMock.mockRejectedValue(new TypeError('Failed to fetch'))
    await expect(http.get('/api/worlds')).rejects.toMatchObject({ status: 0 })
  })

  it('reads cookies', () => {
    expect(readCookie('csrftoken')).toBe('tok123')
    expect(readCookie('nope')).toBe('')
  })
})

describe('errorFromBody', () => {
  it('keeps per-item errors of a bulk create', () => {
    const e = errorFromBody(400, { detail: 'Some models are invalid.', errors: [{}, { model_id: ['Duplicate.'] }] })
    expect(e.errors).toEqual([{}, { model_id: ['Duplicate.'] }])
    expect(e.fieldErrors).toEqual({})
  })

  it('flattens nested errors to dotted keys', () => {
    const e = errorFromBody(400, { detail: 'x', errors: { config: { temperature: ['Too hot.'] } } })
    expect(e.fieldErrors).toEqual({ 'config.temperature': ['Too hot.'] })
  })

  it('accepts a plain DRF validation body and derives a detail', () => {
    const e = errorFromBody(400, { name: ['This field is required.'] })
    expect(e.detail).toBe('This field is required.')
    expect(e.fieldErrors).toEqual({ name: ['This field is required.'] })
  })

  it('has a readable default detail', () => {
    expect(errorFromBody(409, undefined).detail).toMatch(/in progress/)
    expect(errorFromBody(500, 'oops').detail).toMatch(/server/)
  })
})
