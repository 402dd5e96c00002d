import { describe, expect, it } from 'vitest'
import { renderStory } from './markdown'

describe('renderStory', () => {
  it('renders bold and actions in italics', () => {
    const html = renderStory('**Stop.** *She draws her sword.*')
    expect(html).toContain('<strong>Stop.</strong>')
    expect(html).toContain('<em>She draws her sword.</em>')
  })

  it('shows typed HTML as text, never as markup', () => {
    const html = renderStory('<img src=x onerror="alert(1)"> <script>alert(2)</script> <b>hi</b>')
    expect(html).not.toMatch(/<img|<script|<b>/)
    expect(html).toContain('&lt;script&gt;alert(2)&lt;/script&gt;')
    const host = document.createElement('div')
    host.innerHTML = html
    expect(host.querySelectorAll('img, script, b').length).toBe(0)
    expect(host.textContent).toContain('<b>hi</b>')
  })

  it('loads no images and makes no script links', () => {
    const html = renderStory('![track](https://evil.example/pixel.png) [x](javascript:alert(1))')
    expect(html).not.toContain('<img')
    expect(html).not.toContain('href="javascript:')
    const link = renderStory('[map](https://example.com/map)')
    expect(link).toContain('target="_blank"')
    expect(link).toContain('rel="noopener noreferrer nofollow"')
  })

  it('highlights speech, also around emphasis and with curly quotes', () => {
    const host = document.createElement('div')
    host.innerHTML = renderStory('He nods. "I *really* mean it," he says. “Go.” Then silence.')
    const spans = [...host.querySelectorAll('.rp-speech')].map((s) => s.textContent)
    expect(spans).toEqual(['"I really mean it,"', '“Go.”'])
    expect(host.querySelector('.rp-speech em')?.textContent).toBe('really')
    expect(host.textContent).toBe('He nods. "I really mean it," he says. “Go.” Then silence.\n')
  })

  it('closes an unfinished quote at the end of its paragraph (text still streaming)', () => {
    const host = document.createElement('div')
    host.innerHTML = renderStory('"Wait, I\n\nNext paragraph.')
    expect(host.querySelectorAll('.rp-speech').length).toBe(1)
    expect(host.querySelectorAll('p')[1]?.querySelector('.rp-speech')).toBeNull()
  })

  it('keeps line breaks of a chat message', () => {
    expect(renderStory('one\ntwo')).toContain('one<br>\ntwo')
  })
})
