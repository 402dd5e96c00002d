import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { cardUrl, importPersona, uploadAvatar } from './personas'

describe('uploadAvatar', () => {
  const fetchMock = vi.fn()
  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock)
    document.cookie = 'csrftoken=tok123; path=/'
  })
  afterEach(() => {
    vi.unstubAllGlobals()
    fetchMock.mockReset()
    document.cookie = 'csrftoken=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/'
  })

  it('posts the file as multipart form data (the browser sets the boundary), with the CSRF header', async () => {
    fetchMock.mockResolvedValue(new Response(JSON.stringify({ id: 'p1', avatar_url: '/media/avatars/a.png' }), { status: 200 }))
    const file = new File(['png'], 'face.png', { type: 'image/png' })
    const out = await uploadAvatar('p1', file)

    expect(out.avatar_url).toBe('/media/avatars/a.png')
    const [url, init] = fetchMock.mock.calls[0] as [string, RequestInit]
    expect(url).toBe('/api/personas/p1/avatar')
    expect(init.method).toBe('POST')
    expect(init.body).toBeInstanceOf(FormData)
    expect((init.body as FormData).get('avatar')).toBeInstanceOf(File)
    const headers = init.headers as Record<string, string>
    expect(headers['Content-Type']).toBeUndefined()
    expect(headers['X-CSRFToken']).toBe('tok123')
  })
})

describe('importPersona and cardUrl', () => {
  const fetchMock = vi.fn()
  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock)
    document.cookie = 'csrftoken=tok123; path=/'
  })
  afterEach(() => {
    vi.unstubAllGlobals()
    fetchMock.mockReset()
    document.cookie = 'csrftoken=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/'
  })

  it('posts the card file as multipart field `file`', async () => {
    fetchMock.mockResolvedValue(new Response(JSON.stringify({ id: 'p2', name: 'Mira' }), { status: 201 }))
    const file = new File(['{}'], 'mira.json', { type: 'application/json' })
    const out = await importPersona(file)

    expect(out.name).toBe('Mira')
    const [url, init] = fetchMock.mock.calls[0] as [string, RequestInit]
    expect(url).toBe('/api/personas/import')
    expect(init.method).toBe('POST')
    expect((init.body as FormData).get('file')).toBeInstanceOf(File)
    expect((init.headers as Record<string, string>)['X-CSRFToken']).toBe('tok123')
  })

  it('rejects with the server\'s reason for a malformed card', async () => {
    const body = { detail: 'data.name is missing.', errors: { file: ['data.name is missing.'] } }
    fetchMock.mockResolvedValue(new Response(JSON.stringify(body), { status: 400 }))
    await expect(importPersona(new File(['{}'], 'bad.json'))).rejects.toMatchObject({
      status: 400,
      detail: 'data.name is missing.',
    })
  })

  it('names each card download by spec and format', () => {
    expect(cardUrl('p 1', 'v2', 'png')).toBe('/api/personas/p%201/card?spec=v2&format=png')
    expect(cardUrl('p1', 'v3', 'json')).toBe('/api/personas/p1/card?spec=v3&format=json')
  })
})
