/** Checks that text written by people or the model is laid out in its own direction. */

/** Hebrew with quotes: the text that came out of order (issue 25). */
export const RTL = 'היא אמרה "שלום" ויצאה'
/** Its first word: story rendering splits the quote off, this stays in one text node. */
export const RTL_WORD = 'היא'

/**
 * Every text node under `root` that contains `marker`, each with whether it is isolated:
 * inside an element with dir="auto" or a <bdi>, below `root` itself.
 */
export function isolation(root: Element, marker: string = RTL_WORD): boolean[] {
  const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT)
  const found: boolean[] = []
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.textContent?.includes(marker)) continue
    let isolated = false
    for (let el = node.parentElement; el && el !== root; el = el.parentElement) {
      if (el.tagName === 'BDI' || el.getAttribute('dir') === 'auto') {
        isolated = true
        break
      }
    }
    found.push(isolated)
  }
  return found
}
