/**
 * The end of a scene: two players joined by the invite link; the one on a 390 × 844 phone
 * finds the frame first on the dashboard (no production of their own: the hero card); the
 * GM closes the scene with an epilogue; each player's ended page shows their own epilogue,
 * never the other's character's secret; the GM's shows both; the dashboards list the frame
 * as closed and offer the GM "Play with friends". With LMIX_SCREENSHOTS set, pictures of the
 * dashboards and the ended pages.
 */
import assert from 'node:assert/strict'
import path from 'node:path'
import { api, e2e, eventually, expectCount, expectText, expectVisible, signUp, unique, useLmix } from './harness.mjs'

const lmix = useLmix()

const mark = (who) => `${who}-MARK-${unique('x').slice(2)}`

e2e(lmix, 'epilogue: the GM closes a scene with an epilogue; each player reads their own', async ({ page: gm, suite, step }) => {
  const marks = { alice: mark('ALICE'), bob: mark('BOB') }
  let frameId
  let inviteCode
  let seats

  await signUp(gm)
  const ready = await step('the GM starts a frame with two open seats', async () => {
    const world = await api(gm, 'POST', '/api/worlds', { name: unique('World'), description: 'A rainy harbour town.' })
    const scenario = await api(gm, 'POST', '/api/scenarios', { name: unique('Scenario'), description: 'A ship docks late.' })
    const offline = (await api(gm, 'GET', '/api/models')).find((m) => m.api_endpoint === 'offline://narrator')
    const persona = (name, secret) =>
      api(gm, 'POST', '/api/personas', { name, universal_truth: `${name} works at the docks.`, internal_truth: secret, external_truth: '' })
    const cast = [await persona('Alice Thompson', marks.alice), await persona('Bob Marsh', marks.bob)]
    const assistants = []
    for (const p of cast) assistants.push((await api(gm, 'POST', '/api/assistants', { persona: p.id, model: offline.id })).id)
    const production = await api(gm, 'POST', '/api/productions', { name: unique('Ending'), world: world.id, scenario: scenario.id, assistants, show_directive: false })
    const view = await api(gm, 'POST', `/api/productions/${production.id}/frames`, { name: 'Last night at the docks', open_seats: cast.map((c) => c.id) })
    frameId = view.id
    inviteCode = view.invite_code
    seats = cast.map((c) => view.seats.find((s) => s.persona === c.id).id)
  })
  if (!ready) return

  const phone = await suite.browser.newContext({ baseURL: suite.baseURL, viewport: { width: 390, height: 844 } })
  const desk = await suite.browser.newContext({ baseURL: suite.baseURL, viewport: { width: 1366, height: 900 } })
  try {
    const alice = await phone.newPage()
    const bob = await desk.newPage()
    await step('the players take a seat each; Alice, with no production, finds the frame first on her dashboard', async () => {
      await signUp(alice)
      await signUp(bob)
      await api(alice, 'POST', '/api/frames/join', { invite_code: inviteCode, seat: seats[0] })
      await api(bob, 'POST', '/api/frames/join', { invite_code: inviteCode, seat: seats[1] })
      await alice.goto('/')
      const hero = alice.getByTestId('frame-hero')
      await expectText(hero, /Last night at the docks/)
      await expectText(hero, /You play Alice Thompson/)
      await expectVisible(alice.getByTestId('frames-no-production'))
      const { scrollWidth } = await alice.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth }))
      assert.ok(scrollWidth <= 390, `scrollWidth ${scrollWidth} > 390`)
      if (process.env.LMIX_SCREENSHOTS) await alice.screenshot({ path: path.join(process.env.LMIX_SCREENSHOTS, 'dashboard-player-phone.png') })
      await hero.click()
      await eventually(async () => alice.url().endsWith(`/frames/${frameId}`), { message: 'the hero card opens the player page' })
      await expectVisible(alice.getByTestId('composer-input'))
      await bob.goto(`/frames/${frameId}`)
      await expectVisible(bob.getByTestId('composer-input'))
    })

    await step('the GM closes the scene with an epilogue (ticked by default)', async () => {
      await gm.goto(`/frames/${frameId}/gm`)
      await gm.getByTestId('gm-close').click()
      const box = gm.getByTestId('close-epilogue').locator('input')
      assert.equal(await box.isChecked(), true)
      await gm.getByTestId('confirm-ok').click()
      await expectText(gm.getByTestId('frame-ended-title'), 'This scene has ended')
      await expectCount(gm.getByTestId('epilogue-item').filter({ has: gm.getByTestId('epilogue-text') }), 2)
      await expectText(gm.getByTestId('epilogue'), /Epilogue — Alice Thompson/i)
      await expectText(gm.getByTestId('epilogue'), /Epilogue — Bob Marsh/i)
      if (process.env.LMIX_SCREENSHOTS) await gm.screenshot({ path: path.join(process.env.LMIX_SCREENSHOTS, 'epilogue-gm-desktop.png') })
    })

    await step('each player’s ended page shows their own epilogue, nobody else’s', async () => {
      for (const [page, me, other, secret] of [
        [alice, 'Alice Thompson', 'Bob Marsh', marks.bob],
        [bob, 'Bob Marsh', 'Alice Thompson', marks.alice],
      ]) {
        await expectText(page.getByTestId('frame-ended-title'), 'This scene has ended')
        await expectCount(page.getByTestId('epilogue-item'), 1)
        await expectText(page.getByTestId('epilogue-text'), new RegExp(me))
        const text = await page.getByTestId('epilogue').innerText()
        assert.ok(!text.includes(other), `${other}'s epilogue is on ${me}'s page`)
        assert.ok(!(await page.locator('body').innerText()).includes(secret), `a secret of ${other} is on ${me}'s page`)
      }
      const { scrollWidth } = await alice.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth }))
      assert.ok(scrollWidth <= 390, `scrollWidth ${scrollWidth} > 390`)
      if (process.env.LMIX_SCREENSHOTS) await alice.screenshot({ path: path.join(process.env.LMIX_SCREENSHOTS, 'epilogue-phone.png') })
    })

    await step('a reload of the ended page shows the epilogue again, and the story so far ends with it', async () => {
      await bob.reload()
      await expectText(bob.getByTestId('frame-ended-title'), 'This scene has ended')
      await expectText(bob.getByTestId('epilogue-text'), /Bob Marsh/)
      await expectText(bob.getByTestId('narrative-label').last(), /Your epilogue/i)
    })

    await step('back on the dashboards, the closed frame is listed as closed; the GM may start another', async () => {
      await alice.goto('/')
      const row = alice.getByTestId('frame-item').filter({ hasText: 'Last night at the docks' })
      await expectText(row.getByTestId('frame-status'), 'closed')
      const { scrollWidth } = await alice.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth }))
      assert.ok(scrollWidth <= 390, `scrollWidth ${scrollWidth} > 390`)
      await gm.goto('/')
      const mine = gm.getByTestId('frame-item').filter({ hasText: 'Last night at the docks' })
      await expectText(mine, /GM/)
      await expectText(mine.getByTestId('frame-status'), 'closed')
      await expectVisible(gm.getByTestId('play-with-friends'))
      if (process.env.LMIX_SCREENSHOTS) await gm.screenshot({ path: path.join(process.env.LMIX_SCREENSHOTS, 'dashboard-gm-desktop.png') })
      await gm.getByTestId('play-with-friends').click()
      await expectVisible(gm.getByTestId('frame-modal'))
    })
  } finally {
    await phone.close().catch(() => {})
    await desk.close().catch(() => {})
  }
})
