/** Keep a scrolling box at its end while its content grows, unless the reader scrolled up to read. */
import { nextTick, useTemplateRef, watch, type WatchSource } from 'vue'

/** `refName`: the template ref of the scrolling box (`<div ref="feed">`). */
export function useStickToBottom(refName: string, grows: WatchSource<unknown>, slackPx = 80) {
  const box = useTemplateRef<HTMLElement>(refName)
  let stick = true
  function onScroll() {
    const el = box.value
    if (el) stick = el.scrollHeight - el.scrollTop - el.clientHeight < slackPx
  }
  watch(grows, async () => {
    if (!stick) return
    await nextTick()
    const el = box.value
    if (el) el.scrollTop = el.scrollHeight
  })
  return { onScroll }
}
