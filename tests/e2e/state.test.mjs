/**
 * The state drawer (frontend/src/components/frame/CharacterStateSection.vue): the GM opens a
 * seat's sheet dialog and sets its character's mood; the seat's player, whose own state is
 * read-only in their sheet, sees the new mood arrive live (`state.changed` over the frame
 * socket, no reload, no refresh click), and nobody else hears of it. A 1366 px desktop for
 * the GM, a 390 px phone for the player; with LMIX_SCREENSHOTS set, pictures of both.
 */
import assert from 'node:assert/strict'
import path from 'node:path'
import { createCast, joinSeat, openBrowser, startFrame } from './frame_setup.mjs'
import { e2e, expectText, expectVisible, signUp, useLmix } from './harness.mjs'

const lmix = useLmix()
const shoot = async (page, name) => {
  if (process.env.LMIX_SCREENSHOTS) await page.screenshot({ path: path.join(process.env.LMIX_SCREENSHOTS, name), fullPage: false })
}

e2e(lmix, 'state: the GM edits a mood and the player’s drawer shows it live', async ({ page: gm, suite, step }) => {
  let frameId
  let seat
  let inviteCode
  await signUp(gm)
  const ready = await step('the GM starts a scene with Alice’s seat open', async () => {
    const person = (name, knownAs) => ({ name, fields: { known_as: knownAs, universal_truth: `${knownAs} works at the docks.` } })
    const cast = [person('Alice Thompson', 'The Painter'), person('Bob Marsh', 'The Porter')]
    const { production } = await createCast(gm, cast, { scenario: 'A ship docks late.' })
    const view = await startFrame(gm, production, cast, { name: 'Moods', open_seats: [cast[0].persona] })
    frameId = view.id
    inviteCode = view.invite_code
    seat = cast[0].seat
  })
  if (!ready) return

  const player = await openBrowser(suite, { viewport: { width: 390, height: 844 } })
  try {
    const p = player.page
    await step('the player reads their own state, read-only', async () => {
      await signUp(p)
      await joinSeat(p, inviteCode, seat)
      await p.goto(`/frames/${frameId}`)
      const state = p.getByTestId('sheet-state')
      await expectText(state.getByTestId('state-mood'), 'neutral (50%)')
      assert.equal(await state.getByTestId('state-mood-select').count(), 0, 'the player may not edit')
    })

    await step('the GM sets Alice’s mood in the seat’s dialog, and the player’s drawer follows live', async () => {
      await gm.setViewportSize({ width: 1366, height: 900 })
      await gm.goto(`/frames/${frameId}/gm`)
      await gm.locator(`[data-testid="gm-seat"][data-seat-id="${seat}"]`).getByTestId('gm-seat-sheet').click()
      const dialog = gm.getByTestId('gm-sheet-dialog')
      await expectText(dialog.getByTestId('state-mood'), 'neutral (50%)')
      await dialog.getByTestId('state-mood-select').selectOption('angry')
      await dialog.getByTestId('state-intensity').fill('80')
      await dialog.getByTestId('state-mood-save').click()
      await expectText(dialog.getByTestId('state-mood'), 'angry (80%)')
      await expectText(p.getByTestId('sheet-state').getByTestId('state-mood'), 'angry (80%)')
      await expectVisible(dialog.getByTestId('state-fact-input'))
      await shoot(gm, 'state-gm-1366.png')
      await p.getByTestId('sheet-state').scrollIntoViewIfNeeded()
      await shoot(p, 'state-player-390.png')
      const { scrollWidth } = await p.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth }))
      assert.ok(scrollWidth <= 390, `scrollWidth ${scrollWidth} > 390`)
    })

    await step('the player’s socket heard state.changed for their seat only', async () => {
      const changed = player.frames.map((f) => f.msg).filter((m) => m?.type === 'state.changed')
      assert.ok(changed.length >= 1, 'no state.changed heard')
      assert.ok(changed.every((e) => e.seat === seat), 'another seat’s state.changed reached the player')
    })
  } finally {
    await player.context.close().catch(() => {})
  }
})
