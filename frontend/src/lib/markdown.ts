/**
 * Story text as safe HTML: Markdown without raw HTML (a tag typed in a message shows as
 * text), with the roleplay conventions of chat front ends — `*actions*` in italics and
 * "speech" highlighted. Images are not loaded (a message must not make the reader's browser
 * fetch URLs); links open in a new tab without telling the target where they came from.
 */
import MarkdownIt from 'markdown-it'
import type StateCore from 'markdown-it/lib/rules_core/state_core.mjs'
import type Token from 'markdown-it/lib/token.mjs'

const md = new MarkdownIt({ html: false, linkify: false, typographer: false, breaks: true })
md.disable(['image', 'table'])

// Opening and closing marks of speech: straight quotes toggle, curly ones pair.
const QUOTES = /["“”]/g

/** Wrap quoted speech in spans, across the inline tokens of each paragraph (emphasis may
 *  sit inside a quote). An unclosed quote ends with its paragraph. */
function speech(state: StateCore): void {
  for (const block of state.tokens) {
    if (block.type !== 'inline' || !block.children) continue
    const out: Token[] = []
    let open = false
    const mark = (opening: boolean) => {
      const token = new state.Token('html_inline', '', 0)
      token.content = opening ? '<span class="rp-speech">' : '</span>'
      out.push(token)
      open = opening
    }
    for (const child of block.children) {
      if (child.type !== 'text') {
        out.push(child)
        continue
      }
      let last = 0
      for (const match of child.content.matchAll(QUOTES)) {
        const at = match.index ?? 0
        const opening = match[0] === '“' || (match[0] === '"' && !open)
        const piece = new state.Token('text', '', 0)
        if (opening) {
          piece.content = child.content.slice(last, at)
          out.push(piece)
          if (!open) mark(true)
          last = at
        } else if (open) {
          piece.content = child.content.slice(last, at + 1)
          out.push(piece)
          mark(false)
          last = at + 1
        }
      }
      const rest = new state.Token('text', '', 0)
      rest.content = child.content.slice(last)
      out.push(rest)
    }
    if (open) mark(false)
    block.children = out.filter((t) => t.type !== 'text' || t.content !== '')
  }
}
md.core.ruler.push('rp_speech', speech)

const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options))
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx]!.attrSet('target', '_blank')
  tokens[idx]!.attrSet('rel', 'noopener noreferrer nofollow')
  return defaultLinkOpen(tokens, idx, options, env, self)
}

/** `text` as HTML that is safe to insert (v-html). */
export function renderStory(text: string): string {
  return md.render(text)
}

/** One line of story (an action, a fact) the same way, without a paragraph around it. */
export function renderStoryLine(text: string): string {
  return md.renderInline(text)
}
