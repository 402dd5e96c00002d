/**
 * Scenes: an outcome is played (the GM narrates it); the GM closes the scene from the GM
 * page with the next scene's title; both players' feeds show the divider "Scene 2 — The
 * docks" (one on a 390 × 844 phone, one at 1366 px); the summary of scene 1 is written in
 * the background and each player reads their own character's, never the other's. With
 * LMIX_SCREENSHOTS set, pictures of the GM's page and both players'.
 */
import assert from 'node:assert/strict'
import path from 'node:path'
import { createCast, joinSeat, mark, startFrame } from './frame_setup.mjs'
import { api, e2e, eventually, expectCount, expectText, expectVisible, signUp, useLmix } from './harness.mjs'

const lmix = useLmix()
const shot = async (page, name) => {
  if (process.env.LMIX_SCREENSHOTS) await page.screenshot({ path: path.join(process.env.LMIX_SCREENSHOTS, name), fullPage: true })
}

e2e(lmix, 'scenes: the GM closes a scene; both players see the divider and their own summary', async ({ page: gm, suite, step }) => {
  const fact = mark('LAMP')
  const cast = [{ name: 'Alice Thompson' }, { name: 'Bob Marsh' }]
  let view

  await signUp(gm)
  await gm.setViewportSize({ width: 1366, height: 900 })
  const ready = await step('the GM starts a frame with two open seats', async () => {
    const { production } = await createCast(gm, cast)
    view = await startFrame(gm, production, cast, { name: 'Night at the docks', open_seats: cast.map((m) => m.persona) })
  })
  if (!ready) return

  const phone = await suite.browser.newContext({ baseURL: suite.baseURL, viewport: { width: 390, height: 844 } })
  const desk = await suite.browser.newContext({ baseURL: suite.baseURL, viewport: { width: 1366, height: 900 } })
  try {
    const alice = await phone.newPage()
    const bob = await desk.newPage()
    await step('the players take a seat each and open the frame', async () => {
      for (const [page, member] of [[alice, cast[0]], [bob, cast[1]]]) {
        await signUp(page)
        await joinSeat(page, view.invite_code, member.seat)
        await page.goto(`/frames/${view.id}`)
        await expectVisible(page.getByTestId('composer-input'))
      }
    })

    await step('an outcome is played: everyone reads it', async () => {
      await api(gm, 'POST', `/api/frames/${view.id}/narration`, { text: `The harbour lamp is lit (${fact}).` })
      for (const page of [alice, bob]) await expectVisible(page.getByTestId('feed-outcome').filter({ hasText: fact }))
      await expectCount(alice.getByTestId('scene-divider'), 0)
    })

    await step('the GM closes the scene, naming the next one', async () => {
      await gm.goto(`/frames/${view.id}/gm`)
      await expectVisible(gm.getByTestId('feed-outcome').filter({ hasText: fact }))
      await gm.getByTestId('scene-close-title').fill('The docks')
      await gm.getByTestId('scene-close-button').click()
      await expectText(gm.getByTestId('scene-title'), 'Scene 2 — The docks')
      await eventually(
        async () => {
          const left = await gm.getByTestId('scene-close-title').inputValue()
          if (left) throw new Error(`the title field still holds "${left}"`)
        },
        { message: 'the title field is emptied once the scene closed' },
      )
    })

    await step('both players see the divider, and each reads their own summary of scene 1', async () => {
      for (const [page, me, other] of [
        [alice, cast[0], cast[1]],
        [bob, cast[1], cast[0]],
      ]) {
        await expectText(page.getByTestId('scene-title'), 'Scene 2 — The docks')
        const summary = page.getByTestId('scene-summary')
        await summary.locator('summary').click()
        await expectText(summary.getByTestId('scene-own-summary'), new RegExp(fact))
        await expectCount(summary.getByTestId('scene-own-summary'), 1)
        const scenes = await api(page, 'GET', `/api/frames/${view.id}/scenes`)
        assert.deepEqual(
          scenes.scenes[0].summaries.map((s) => s.seat),
          [me.seat],
          `${me.name} reads only their own summary, not ${other.name}'s`,
        )
      }
      const { scrollWidth } = await alice.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth }))
      assert.ok(scrollWidth <= 390, `scrollWidth ${scrollWidth} > 390`)
      await shot(alice, 'scenes-player-phone.png')
      await shot(bob, 'scenes-player-desktop.png')
      const all = gm.getByTestId('scene-summary')
      await all.locator('summary').click()
      await expectCount(all.getByTestId('scene-own-summary'), 2)
      await shot(gm, 'scenes-gm-desktop.png')
    })
  } finally {
    await phone.close().catch(() => {})
    await desk.close().catch(() => {})
  }
})
